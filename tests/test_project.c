/* The kernel-level projection (harness/analysis/project/project.h): waves, blocks
 * per SM, the roofline exponent, one kernel's projected time, the step
 * re-laid on the target's timeline, and a synthetic trace read kernel by
 * kernel. Every expected value is worked out by hand in the comments. Needs
 * MLBENCH_CONFIG_DIR (set by ctest) for the trace rules and datasheets. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hardware.h"
#include "project.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))

static void test_waves(void **s)
{
    (void)s;
    assert_true(mb_proj_waves(264, 2, 132) == 1); /* exactly one full wave */
    assert_true(mb_proj_waves(265, 2, 132) == 2); /* one block more: a second, nearly empty wave */
    assert_true(mb_proj_waves(10, 1, 132) == 1);  /* a partial wave still takes one */
    assert_true(mb_proj_waves(0, 1, 132) == 1);
    assert_true(mb_proj_waves(1000, 8, 100) == 2);
}

static void test_resident(void **s)
{
    (void)s;
    assert_true(mb_proj_resident(256, 2048) == 8);
    assert_true(mb_proj_resident(1024, 1536) == 1); /* 1.5 blocks do not fit: one */
    assert_true(mb_proj_resident(32, 2048) == 32);  /* 64 by threads, 32 by the block limit */
    assert_true(mb_proj_resident(0, 2048) == 1);    /* unknown block size */
}

static void test_gamma(void **s)
{
    (void)s;
    CLOSE(mb_proj_gamma(0, 1e6, 100), 1);     /* no math: memory-bound */
    CLOSE(mb_proj_gamma(1e9, 0, 100), 0);     /* math, no bytes: compute-bound */
    CLOSE(mb_proj_gamma(50, 1, 100), 0.75);   /* I = R/2: 1 - 0.5 x 0.5 */
    CLOSE(mb_proj_gamma(100, 1, 100), 0.5);   /* at the ridge, from both sides */
    CLOSE(mb_proj_gamma(200, 1, 100), 0.25);  /* I = 2R: 0.5 x R / I */
    CLOSE(mb_proj_gamma(1e6, 1, 100), 5e-5);
}

static void test_sdpa_flops(void **s)
{
    (void)s;
    /* b=2, h=16, l=s=1024, d=64: Q K^T and P V are 2 x 2*16*1024*1024*64 */
    double one = 2.0 * 2 * 16 * 1024 * 1024 * 64;
    CLOSE(mb_proj_sdpa_flops(2, 16, 1024, 1024, 64, false, false), 2 * one);
    CLOSE(mb_proj_sdpa_flops(2, 16, 1024, 1024, 64, true, false), 5 * one);
    CLOSE(mb_proj_sdpa_flops(2, 16, 1024, 1024, 64, false, true), one);
}

static void test_sustained(void **s)
{
    (void)s;
    /* L4: [gpu] fp32_sustained_clock_mhz 795 of boost 2040 MHz: 795 / 2040 = 0.3897 of its printed FP32 peak */
    CLOSE(mb_proj_sustained(795, 2040), 795.0 / 2040.0);
    CLOSE(mb_proj_sustained(1000, 2000), 0.5);
    CLOSE(mb_proj_sustained(0, 1980), 1);    /* none documented (the H100 SXM): the printed peak */
    CLOSE(mb_proj_sustained(795, 0), 1);     /* no boost clock to divide by */
    CLOSE(mb_proj_sustained(1980, 1980), 1); /* held at boost */
    CLOSE(mb_proj_sustained(2100, 1980), 1); /* above boost: never faster than printed */
    /* a compute-bound kernel (no bytes) from a GPU held at 1/2 of its peak
     * to one held at all of an equal peak: twice as fast there */
    mb_proj_gpu here = { .sms = 100, .bw = 1e12, .flops = { [MB_PM_FP32] = 10e12 * 0.5 } };
    mb_proj_gpu there = { .sms = 100, .bw = 1e12, .flops = { [MB_PM_FP32] = 10e12 } };
    mb_proj_kernel k = { .seconds = 1e-3, .flops = 1e9, .tensor = true };
    CLOSE(mb_proj_kernel_time(&k, &here, &there).seconds, 0.5e-3);
}

static void test_kernel_overhead(void **s)
{
    (void)s;
    /* 1 ms of which 0.2 ms is per-operator overhead, memory-bound, onto
     * twice the bandwidth: 0.2 + 0.8 / 2 = 0.6 ms, not 0.5 */
    mb_proj_gpu here = { .sms = 100, .bw = 1e12, .flops = { [MB_PM_FP32] = 10e12 } };
    mb_proj_gpu there = { .sms = 100, .bw = 2e12, .flops = { [MB_PM_FP32] = 10e12 } };
    mb_proj_kernel k = { .seconds = 1e-3, .bytes = 1e9, .overhead = 0.2e-3 };
    mb_proj_result r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.seconds, 0.6e-3);
    assert_int_equal(r.bound, MB_PB_MEMORY);
    /* 12 us of which 9 us overhead: 3 us of work is latency-bound, kept whole */
    k = (mb_proj_kernel){ .seconds = 12e-6, .bytes = 1e9, .overhead = 9e-6 };
    r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.seconds, 12e-6);
    assert_int_equal(r.bound, MB_PB_LATENCY);
    /* an overhead above the time itself is all of it: kept */
    k = (mb_proj_kernel){ .seconds = 1e-3, .bytes = 1e9, .overhead = 5e-3 };
    CLOSE(mb_proj_kernel_time(&k, &here, &there).seconds, 1e-3);
}

static mb_proj_gpu gpu(double sms, double fp32, double bf16, double bw_gbps, double mt)
{
    mb_proj_gpu g;
    memset(&g, 0, sizeof g);
    g.sms = sms;
    g.flops[MB_PM_FP32] = fp32 * 1e12;
    g.flops[MB_PM_BF16] = bf16 * 1e12;
    g.bw = bw_gbps * 1e9;
    g.max_threads_per_sm = mt;
    return g;
}

static void test_kernel_memory_bound(void **s)
{
    (void)s;
    mb_proj_gpu here = gpu(100, 10, 100, 1000, 2048), there = gpu(100, 10, 100, 2000, 2048);
    /* 1 GB in 1 ms: at this GPU's bandwidth, all of it the memory's */
    mb_proj_kernel k = { .seconds = 1e-3, .bytes = 1e9, .blocks = 1e5, .threads = 256 };
    mb_proj_result r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.gamma, 1);
    CLOSE(r.seconds, 0.5e-3); /* twice the bandwidth, half the time */
    assert_int_equal(r.bound, MB_PB_MEMORY);
    /* 0.2 GB in 1 ms (a fifth of the bandwidth): 0.2 ms is the memory's,
     * 0.1 ms there; the other 0.8 ms the SMs', the same SMs: 0.9 ms */
    k.bytes = 0.2e9;
    r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.seconds, 0.9e-3);
    assert_int_equal(r.bound, MB_PB_MEMORY);
    /* ... onto a GPU with half the SMs' rate as well (5 TFLOP/s FP32 on 100
     * SMs, waves doubled by nothing: 1e5 blocks fill many): 0.1 + 0.8 x 2 */
    mb_proj_gpu slow_sms = gpu(100, 5, 50, 2000, 2048);
    CLOSE(mb_proj_kernel_time(&k, &here, &slow_sms).seconds, 1.7e-3);
    /* a bf16 elementwise kernel: the rest is the CUDA cores' (the same fp32
     * rate), not the tensor cores' (10x there): 0.9 ms still */
    mb_proj_gpu tensor10 = gpu(100, 10, 1000, 2000, 2048);
    k.math = MB_PM_BF16;
    CLOSE(mb_proj_kernel_time(&k, &here, &tensor10).seconds, 0.9e-3);
    k.math = MB_PM_FP32;
    /* more bytes than the time allows (a cache served some): bandwidth alone */
    k.bytes = 3e9;
    CLOSE(mb_proj_kernel_time(&k, &here, &there).seconds, 0.5e-3);
}

static void test_kernel_compute_waves(void **s)
{
    (void)s;
    /* bf16 matmul without shapes: compute-bound. Here 100 SMs, 100 TFLOP/s
     * (1 per SM); there 200 SMs, 400 (2 per SM). 100000 blocks of 256
     * threads, 8 per SM: 125 waves here, ceil(100000/1600) = 63 there.
     * C = 63/125 x 1/2 = 0.252. */
    mb_proj_gpu here = gpu(100, 10, 100, 1000, 2048), there = gpu(200, 20, 400, 1000, 2048);
    mb_proj_kernel k = { .seconds = 1e-3, .tensor = true, .math = MB_PM_BF16, .blocks = 1e5, .threads = 256 };
    mb_proj_result r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.gamma, 0);
    CLOSE(r.waves_here, 125);
    CLOSE(r.waves_there, 63);
    CLOSE(r.seconds, 0.252e-3);
    assert_int_equal(r.bound, MB_PB_COMPUTE);
}

static void test_kernel_wave_quantization(void **s)
{
    (void)s;
    /* 132 blocks of 1024 threads (one per SM) fill one wave on 132 SMs; on
     * 114 SMs of the same per-SM rate they need two: twice the time,
     * although the peak ratio alone says 1.16x. */
    mb_proj_gpu here = gpu(132, 66, 132, 3000, 1024), there = gpu(114, 57, 114, 3000, 1024);
    mb_proj_kernel k = { .seconds = 1e-3, .tensor = true, .math = MB_PM_BF16, .blocks = 132, .threads = 1024 };
    mb_proj_result r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.waves_here, 1);
    CLOSE(r.waves_there, 2);
    CLOSE(r.seconds, 2e-3);
}

static void test_kernel_roofline_mix(void **s)
{
    (void)s;
    /* 1e9 FLOPs over 1e7 bytes: I = 100 against the target's ridge
     * 400e12 / 2e12 = 200, so g = 1 - 0.5 x 100/200 = 0.75. Memory ratio
     * 1000/2000 = 0.5; compute: many waves (SM ratio 100/100) x per-SM
     * 1/4 = 0.25. T = 1 ms x 0.5^0.75 x 0.25^0.25. */
    mb_proj_gpu here = gpu(100, 10, 100, 1000, 2048), there = gpu(100, 10, 400, 2000, 2048);
    mb_proj_kernel k = { .seconds = 1e-3, .flops = 1e9, .bytes = 1e7, .tensor = true, .math = MB_PM_BF16 };
    mb_proj_result r = mb_proj_kernel_time(&k, &here, &there);
    CLOSE(r.gamma, 0.75);
    CLOSE(r.seconds, 1e-3 * pow(0.5, 0.75) * pow(0.25, 0.25));
}

static void test_kernel_latency_and_no_peak(void **s)
{
    (void)s;
    mb_proj_gpu here = gpu(100, 10, 100, 1000, 2048), there = gpu(200, 20, 0, 4000, 2048);
    mb_proj_kernel tiny = { .seconds = 3e-6, .bytes = 1e3 };
    mb_proj_result r = mb_proj_kernel_time(&tiny, &here, &there);
    CLOSE(r.seconds, 3e-6); /* launch-bound either way */
    assert_int_equal(r.bound, MB_PB_LATENCY);
    mb_proj_kernel mm = { .seconds = 1e-3, .tensor = true, .math = MB_PM_BF16 };
    r = mb_proj_kernel_time(&mm, &here, &there);
    assert_true(r.no_peak); /* no bf16 figure there: kept, never scaled by fp32 */
    CLOSE(r.seconds, 1e-3);
}

/* One host thread, one stream (times in seconds from the step's start):
 *   L1 launch [0, 0.01]      K1 [0.02, 1.02]
 *   S1 sync   [0.05, 1.03]   waits for K1, returns 0.01 after it
 *   L2 launch [1.10, 1.11]   K2 [1.12, 2.12]
 *   S2 sync   [1.15, 2.13]   waits for K2
 *   the step ends at 2.20
 * GPU-bound here. With K1, K2 at 0.1 s: K1 0.02-0.12, S1 ends 0.13, L2 at
 * 0.13 + 0.07 = 0.20, K2 0.22-0.32, S2 starts 0.21 + 0.04 = 0.25 and ends
 * 0.33, the step 0.33 + 0.07 = 0.40: the host's gaps (0.07 + 0.04 + ...)
 * that the long kernels hid are now exposed, not a 10x shorter step. */
static int scenario(mb_proj_event *ev)
{
    mb_proj_event e[] = {
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 0, .end = 0.01, .launch = -1 },
        { .kind = MB_PE_GPU, .lane = 0, .start = 0.02, .end = 1.02, .launch = 0 },
        { .kind = MB_PE_SYNC, .lane = 0, .start = 0.05, .end = 1.03, .launch = -1 },
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 1.10, .end = 1.11, .launch = -1 },
        { .kind = MB_PE_GPU, .lane = 0, .start = 1.12, .end = 2.12, .launch = 3 },
        { .kind = MB_PE_SYNC, .lane = 0, .start = 1.15, .end = 2.13, .launch = -1 },
    };
    memcpy(ev, e, sizeof e);
    return (int)(sizeof e / sizeof *e);
}

/* The scenario with every GPU event at its measured duration. */
static int measured_scenario(mb_proj_event *ev)
{
    int n = scenario(ev);
    for (int i = 0; i < n; i++)
        ev[i].new_seconds = ev[i].end - ev[i].start;
    return n;
}

static void test_relay_identity(void **s)
{
    (void)s;
    mb_proj_event ev[8];
    int n = measured_scenario(ev);
    double end;
    mb_err err = { 0 };
    assert_int_equal(mb_proj_relay(ev, n, 1, 2.20, 1, &end, &err), MB_OK);
    CLOSE(end, 2.20);
    for (int i = 0; i < n; i++) {
        CLOSE(ev[i].new_start, ev[i].start);
        CLOSE(ev[i].new_end, ev[i].end);
    }
}

static void test_relay_exposes_host(void **s)
{
    (void)s;
    mb_proj_event ev[8];
    int n = scenario(ev);
    ev[1].new_seconds = ev[4].new_seconds = 0.1;
    double end;
    mb_err err = { 0 };
    assert_int_equal(mb_proj_relay(ev, n, 1, 2.20, 1, &end, &err), MB_OK);
    CLOSE(ev[1].new_end, 0.12);
    CLOSE(ev[2].new_end, 0.13);
    CLOSE(ev[3].new_start, 0.20);
    CLOSE(ev[4].new_start, 0.22);
    CLOSE(ev[5].new_end, 0.33);
    CLOSE(end, 0.40);
}

static void test_relay_host_bound(void **s)
{
    (void)s;
    /* No sync: the host never waits, so a faster GPU leaves the step as it
     * was (the kernels end earlier inside the same host range). */
    mb_proj_event ev[] = {
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 0, .end = 0.01, .launch = -1 },
        { .kind = MB_PE_GPU, .lane = 0, .start = 0.02, .end = 0.50, .launch = 0, .new_seconds = 0.05 },
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 0.90, .end = 0.91, .launch = -1 },
    };
    double end;
    mb_err err = { 0 };
    assert_int_equal(mb_proj_relay(ev, 3, 1, 1.0, 1, &end, &err), MB_OK);
    CLOSE(end, 1.0);
    CLOSE(ev[1].new_end, 0.07);
    ev[0].lane = 5;
    assert_int_equal(mb_proj_relay(ev, 3, 1, 1.0, 1, &end, &err), MB_EUSAGE);
}

/* The scenario with the host's time halved (a profiler's cost taken out):
 * L1 0-0.005; K1 waited for it, its 0.02 s delay halved: 0.01-1.01; S1
 * starts 0.005 + 0.02, ends at K1's end + 0.005 = 1.015; L2 at 1.015 +
 * 0.035 = 1.05; K2 1.05 + 0.01 = 1.06-2.06; S2 ends 2.065; the step 2.065 +
 * 0.035 = 2.10. At scale 0 the kernels run back to back: 2.0. */
static void test_relay_host_scale(void **s)
{
    (void)s;
    mb_proj_event ev[8];
    int n = measured_scenario(ev);
    double end;
    mb_err err = { 0 };
    assert_int_equal(mb_proj_relay(ev, n, 1, 2.20, 0.5, &end, &err), MB_OK);
    CLOSE(ev[0].new_end, 0.005);
    CLOSE(ev[1].new_start, 0.01);
    CLOSE(ev[2].new_end, 1.015);
    CLOSE(ev[3].new_start, 1.05);
    CLOSE(ev[4].new_start, 1.06);
    CLOSE(ev[5].new_end, 2.065);
    CLOSE(end, 2.10);
    assert_int_equal(mb_proj_relay(ev, n, 1, 2.20, 0, &end, &err), MB_OK);
    CLOSE(end, 2.0);
}

/* Back-pressure: L2 waits in the launch call until K1 ends (the queue is
 * full), as a sync would:
 *   L1 [0, 0.01] -> K1 [0.01, 1.01];  L2 [0.02, 1.01] -> K2 [1.01, 2.01];  step end 1.10
 * With K1, K2 at 0.1 s: K1 0.01-0.11, L2 returns at 0.11, K2 0.11-0.21, the
 * host ends at 0.11 + 0.09 = 0.20. Without the blocking flag, L2 keeps its
 * 0.99 s and the step its 1.10 s. */
static void test_relay_backpressure(void **s)
{
    (void)s;
    mb_proj_event ev[] = {
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 0, .end = 0.01, .launch = -1 },
        { .kind = MB_PE_GPU, .lane = 0, .start = 0.01, .end = 1.01, .launch = 0, .new_seconds = 0.1 },
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 0.02, .end = 1.01, .launch = -1, .blocking = true },
        { .kind = MB_PE_GPU, .lane = 0, .start = 1.01, .end = 2.01, .launch = 2, .new_seconds = 0.1 },
    };
    double end;
    mb_err err = { 0 };
    assert_int_equal(mb_proj_relay(ev, 4, 1, 1.10, 1, &end, &err), MB_OK);
    CLOSE(ev[2].new_end, 0.11);
    CLOSE(ev[3].new_end, 0.21);
    CLOSE(end, 0.20);
    ev[2].blocking = false;
    assert_int_equal(mb_proj_relay(ev, 4, 1, 1.10, 1, &end, &err), MB_OK);
    CLOSE(end, 1.10);
    /* identity, blocking: every event keeps its time */
    ev[2].blocking = true;
    ev[1].new_seconds = ev[3].new_seconds = 1.0;
    assert_int_equal(mb_proj_relay(ev, 4, 1, 1.10, 1, &end, &err), MB_OK);
    CLOSE(end, 1.10);
    CLOSE(ev[2].new_end, 1.01);
    CLOSE(ev[3].new_start, 1.01);
}

/* A slower GPU stretches a step whose host never waits: its work spills
 * over into the next step, which waits for it in a steady state. */
static void test_relay_slower_gpu(void **s)
{
    (void)s;
    mb_proj_event ev[] = {
        { .kind = MB_PE_LAUNCH, .lane = 0, .start = 0, .end = 0.01, .launch = -1 },
        { .kind = MB_PE_GPU, .lane = 0, .start = 0.02, .end = 0.90, .launch = 0, .new_seconds = 1.76 },
    };
    double end;
    mb_err err = { 0 };
    assert_int_equal(mb_proj_relay(ev, 2, 1, 1.0, 1, &end, &err), MB_OK);
    CLOSE(end, 1.78 + 0.10); /* K ends at 1.78; the 0.10 after it here follows it */
}

static void test_datasheet_gpu(void **s)
{
    (void)s;
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    assert_int_equal(mb_datasheet_find("h100-sxm", &d, &err), MB_OK);
    mb_proj_gpu g;
    assert_int_equal(mb_proj_gpu_from_datasheet(d, &g, &err), MB_OK);
    CLOSE(g.sms, 132);
    CLOSE(g.bw, 3350e9);
    CLOSE(g.flops[MB_PM_BF16], 989.4e12); /* tensor peaks as printed */
    /* no FP32 sustained clock in h100-sxm.ini: it held its boost through an FP32 load, the printed 67 */
    CLOSE(g.sustained, 1);
    CLOSE(g.flops[MB_PM_FP32], 67e12);
    CLOSE(g.pcie_bw, 3.938e9 * 16);
    CLOSE(g.link_bw, 900e9 / 2); /* GPU to GPU, one way: half the NVLink total */
    mb_datasheet_free(d);
    /* the L4 (l4.ini): power-limited to 795 of its 2040 MHz under FP32: 30.3 x 795 / 2040 = 11.81 TFLOP/s;
     * its tensor peaks as printed */
    assert_int_equal(mb_datasheet_find("l4", &d, &err), MB_OK);
    assert_int_equal(mb_proj_gpu_from_datasheet(d, &g, &err), MB_OK);
    CLOSE(g.sustained, 795.0 / 2040.0);
    CLOSE(g.flops[MB_PM_FP32], 30.3e12 * 795.0 / 2040.0);
    CLOSE(g.flops[MB_PM_BF16], 121e12);
    CLOSE(g.link_bw, g.pcie_bw); /* nvlink_gbps = 0: its peers over PCIe (gen 4 x16) */
    CLOSE(g.link_bw, 1.969e9 * 16);
    mb_datasheet_free(d);
    /* a sustained clock above the boost clock, or without one: a datasheet error naming the file */
    static const char *const bad[] = { "boost_clock_mhz = 1000\nfp32_sustained_clock_mhz = 1500\n",
                                       "fp32_sustained_clock_mhz = 800\n" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[] = "/tmp/mb_test_project_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        char text[512];
        int n = snprintf(text, sizeof text,
                         "[product]\nname = Test GPU\nkind = gpu\nsource = test\n[peak]\nfp32 = 10\n"
                         "[memory]\nbandwidth_gbps = 100\n[gpu]\nsms = 10\n%s",
                         bad[i]);
        assert_true(write(fd, text, (size_t)n) == (ssize_t)n);
        close(fd);
        err = (mb_err){ 0 };
        int rc = mb_datasheet_load(path, &d, &err);
        unlink(path);
        assert_int_equal(rc, MB_OK);
        assert_int_equal(mb_proj_gpu_from_datasheet(d, &g, &err), MB_EUSAGE);
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, "fp32_sustained_clock_mhz"));
        mb_datasheet_free(d);
    }
    /* a datasheet without [gpu] sms: a clear error naming the file */
    err = (mb_err){ 0 };
    assert_int_equal(mb_datasheet_find("a10g", &d, &err), MB_OK);
    assert_int_equal(mb_proj_gpu_from_datasheet(d, &g, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "a10g.ini"));
    assert_non_null(strstr(err.msg, "needs [gpu] sms, which it lacks")); /* its bandwidth and FP32 peak it has */
    mb_datasheet_free(d);
    /* one with none of the three: all named */
    char path[] = "/tmp/mb_test_project_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char bare[] = "[product]\nname = Test GPU\nkind = gpu\nsource = test\n";
    assert_true(write(fd, bare, sizeof bare - 1) == (ssize_t)(sizeof bare - 1));
    close(fd);
    err = (mb_err){ 0 };
    int rc = mb_datasheet_load(path, &d, &err);
    unlink(path);
    assert_int_equal(rc, MB_OK);
    assert_int_equal(mb_proj_gpu_from_datasheet(d, &g, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "needs [gpu] sms, [memory] bandwidth_gbps and [peak] fp32, which it lacks"));
    mb_datasheet_free(d);
}

/* The scenario above as a Kineto trace (microseconds), read kernel by
 * kernel: elementwise kernels (memory-bound), the target with 10x the
 * bandwidth. */
static const char *trace_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 2200000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 10000, \"args\": {\"correlation\": 11}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 1020000, \"dur\": 1000000, \"args\": {\"correlation\": 11, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1050000, \"dur\": 980000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 2100000,"
    " \"dur\": 10000, \"args\": {\"correlation\": 12}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 2120000, \"dur\": 1000000, \"args\": {\"correlation\": 12, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 2150000, \"dur\": 980000}\n"
    "]}\n";

/* The trace in `json`, loaded through a scratch file it removes. */
static mb_proj_trace *load_trace(const char *json)
{
    char path[] = "/tmp/mb_test_project_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, json, strlen(json)) == (ssize_t)strlen(json));
    close(fd);
    mb_proj_trace *t = NULL;
    mb_err err = { 0 };
    int rc = mb_proj_trace_load(path, &t, &err);
    unlink(path);
    assert_int_equal(rc, MB_OK);
    return t;
}

/* Kernel wait: kernel B starts 20 us (or 60) after kernel A ends, its
 * launch (at 500 ms) long returned. Here (1 s kernels): 20 us of kernel
 * wait, the GPU's own gap; 60 us is longer than launching a queued kernel
 * takes (MB_KERNEL_WAIT_MAX_NS), the host's. On a GPU with 10x the
 * bandwidth A ends at 100.04 ms, B waits for its launch (500.00-500.01 ms)
 * and starts 20 us after it began (kept: the delay B had here beyond its
 * stream and launch): the gap [100.04, 500.02) ms is the host's, no kernel
 * wait. Sync to B's end + 10 us, step to 2.1 s here: there
 * 600.02 + 0.01 + 99.93 = 699.96 ms. */
static const char *kernel_wait_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 2100000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 10, \"args\": {\"correlation\": 21}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 1000040, \"dur\": 1000000, \"args\": {\"correlation\": 21, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1500000,"
    " \"dur\": 10, \"args\": {\"correlation\": 22}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": %d, \"dur\": 1000000, \"args\": {\"correlation\": 22, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1500020, \"dur\": %d}\n"
    "]}\n";

static void test_trace_kernel_wait(void **s)
{
    (void)s;
    mb_proj_gpu here = gpu(132, 67, 989.4, 1000, 2048), there = gpu(132, 67, 989.4, 10000, 2048);
    mb_err err = { 0 };
    mb_proj_outcome o;
    char json[4096];
    /* B at A's end + 20 us, the sync to B's end + 10 us */
    snprintf(json, sizeof json, kernel_wait_json, 2000060, 3000070 - 1500020);
    mb_proj_trace *t = load_trace(json);
    assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
    CLOSE(o.here.step, 2.1);
    CLOSE(o.here.cls[MB_PC_MEMORY], 2.0);
    CLOSE(o.here.cls[MB_PC_QUEUED], 20e-6);
    CLOSE(o.here.cls[MB_PC_HOST], 0.1 - 20e-6);
    CLOSE(o.there.step, 0.69996);
    CLOSE(o.there.cls[MB_PC_MEMORY], 0.2);
    CLOSE(o.there.cls[MB_PC_QUEUED], 0);
    CLOSE(o.there.cls[MB_PC_HOST], 0.69996 - 0.2);
    mb_proj_trace_free(t);
    /* B at A's end + 60 us: no launch of a queued kernel takes that long; the host's */
    snprintf(json, sizeof json, kernel_wait_json, 2000100, 3000110 - 1500020);
    t = load_trace(json);
    assert_int_equal(mb_proj_trace_run(t, &here, NULL, 1, &o, &err), MB_OK);
    CLOSE(o.here.cls[MB_PC_QUEUED], 0);
    CLOSE(o.here.cls[MB_PC_HOST], 0.1);
    mb_proj_trace_free(t);
}

static void test_trace_projection(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(trace_json);
    mb_err err = { 0 };
    assert_string_equal(mb_proj_trace_device(t), "NVIDIA H100 80GB HBM3");
    assert_int_equal(mb_proj_trace_steps(t), 1);
    mb_proj_gpu here = gpu(132, 67, 989.4, 1000, 2048), there = gpu(132, 67, 989.4, 10000, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, NULL, 1, &o, &err), MB_OK);
    CLOSE(o.here.step, 2.2);
    CLOSE(o.there.step, 2.2);
    CLOSE(o.here.gpu_busy, 2.0);
    CLOSE(o.here.cls[MB_PC_MEMORY], 2.0);
    CLOSE(o.here.cls[MB_PC_HOST], 0.2);
    assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
    CLOSE(o.there.step, 0.40); /* as test_relay_exposes_host */
    CLOSE(o.there.cls[MB_PC_MEMORY], 0.2);
    CLOSE(o.there.cls[MB_PC_HOST], 0.2);
    assert_int_equal(o.kernels, 2);
    assert_int_equal(o.memory_bound, 2);
    mb_proj_trace_free(t);
}

/* A trace without ProfilerSteps projects the steps gap reports (cut at the
 * optimizer's annotations, docs/traces.md), not the trace's span: a 50-ms
 * set-up (the CUDA context, a first kernel) then three 10-ms steps of a
 * 5-ms kernel each, a step here is 10 ms; it read one run of 85 ms. */
#define OPT_STEP(ts) "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"Optimizer.step#SGD.step\"," \
                     " \"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"dur\": 200},\n"
#define OPT_WORK(ts, k, corr)                                                                                     \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": " #ts \
    ", \"dur\": 10, \"args\": {\"correlation\": " #corr "}},\n"                                                     \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"      \
    " \"ts\": " #k ", \"dur\": 5000, \"args\": {\"correlation\": " #corr ", \"stream\": 7, \"device\": 0,"            \
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
static const char *optimizer_steps_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaFree\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 20000},\n"
    OPT_WORK(22000, 22010, 9)
    OPT_STEP(51000) OPT_WORK(51300, 51310, 1) OPT_STEP(61000) OPT_WORK(61300, 61310, 2)
    OPT_STEP(71000) OPT_WORK(71300, 71310, 3) OPT_STEP(81000)
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 1, \"tid\": 1, \"ts\": 84000, \"dur\": 1000}\n"
    "]}\n";
#undef OPT_WORK
#undef OPT_STEP

/* Without any step, the one window is the trace's span, as gap's run: a
 * 1-ms op and 4 ms of Python before the first launch are in it (the
 * projection's own span of launches and kernels began at the launch). */
static const char *no_step_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 5000,"
    " \"dur\": 10, \"args\": {\"correlation\": 1}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 5010, \"dur\": 2000, \"args\": {\"correlation\": 1, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}}\n"
    "]}\n";

static void test_trace_no_step(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(no_step_json);
    mb_err err = { 0 };
    assert_int_equal(mb_proj_trace_steps(t), 1);
    mb_proj_gpu here = gpu(132, 67, 989.4, 3350, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, NULL, 1, &o, &err), MB_OK);
    assert_true(fabs(o.here.step - 0.00701) < 2e-6);
    CLOSE(o.here.gpu_busy, 0.002);
    mb_proj_trace_free(t);
}

static void test_trace_optimizer_steps(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(optimizer_steps_json);
    mb_err err = { 0 };
    assert_int_equal(mb_proj_trace_steps(t), 3);
    mb_proj_gpu here = gpu(132, 67, 989.4, 3350, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, NULL, 1, &o, &err), MB_OK);
    CLOSE(o.here.step, 0.010);
    CLOSE(o.here.gpu_busy, 0.005);
    mb_proj_trace_free(t);
}

/* The step split gives copies and collectives only the time no compute
 * kernel covers, as the step table does (docs/traces.md): an all-reduce on
 * its own stream [0.01, 0.81] s beside a GEMM [0.10, 0.60] s in a 1 s step
 * is 0.3 s of communication and 0.5 s of matrix math (in proportion to
 * kernel time it was 0.49 and 0.31). */
static const char *overlap_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 1000000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 10000, \"args\": {\"correlation\": 21}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)\","
    " \"pid\": 0, \"tid\": 20, \"ts\": 1010000, \"dur\": 800000, \"args\": {\"correlation\": 21, \"stream\": 20,"
    " \"device\": 0, \"grid\": [32, 1, 1], \"block\": [512, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1020000,"
    " \"dur\": 10000, \"args\": {\"correlation\": 22}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64\","
    " \"pid\": 0, \"tid\": 7, \"ts\": 1100000, \"dur\": 500000, \"args\": {\"correlation\": 22, \"stream\": 7,"
    " \"device\": 0, \"grid\": [132, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1040000, \"dur\": 950000}\n"
    "]}\n";

static void test_split_overlap(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(overlap_json);
    mb_err err = { 0 };
    mb_proj_gpu here = gpu(132, 67, 989.4, 1000, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, NULL, 1, &o, &err), MB_OK);
    CLOSE(o.here.step, 1.0);
    CLOSE(o.here.gpu_busy, 0.8);
    CLOSE(o.here.cls[MB_PC_TENSOR], 0.5);
    CLOSE(o.here.cls[MB_PC_COMM], 0.3);
    CLOSE(o.here.cls[MB_PC_HOST], 0.2);
    mb_proj_trace_free(t);
}

/* A collective kernel on another link: only the time its bytes take at
 * this GPU's link rate scales; the rest (latency, a rank waiting for its
 * peer) stays. One 2-rank all-reduce of 0.8 s in a 1 s step, here on a
 * 450 GB/s link, there on 30 GB/s (15x slower). Its message: N floats, its
 * link bytes N x 4 x 2(2-1)/2. Bandwidth-bound (N = 90e9: 360 GB, 0.8 s at
 * 450 GB/s): 0.8 x 15 = 12 s there. Waiting (N = 250e3: 1 MB, 2.22 us of
 * wire): 0.8 - 2.22e-6 + 2.22e-6 x 15 = 0.80003 s. No size: all of it
 * scales. An unknown link keeps it. */
static const char *coll_json_fmt =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 1000000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 10000, \"args\": {\"correlation\": 21}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)\","
    " \"pid\": 0, \"tid\": 20, \"ts\": 1010000, \"dur\": 800000, \"args\": {\"correlation\": 21, \"stream\": 20,"
    " \"device\": 0, \"grid\": [32, 1, 1], \"block\": [512, 1, 1]%s}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1020000, \"dur\": 970000}\n"
    "]}\n";

static void test_collective_link(void **s)
{
    (void)s;
    static const struct {
        const char *args;
        double there_comm;
    } cases[] = {
        { ", \"In msg nelems\": 90000000000, \"Out msg nelems\": 90000000000, \"dtype\": \"Float\","
          " \"Group size\": 2", 0.8 * 15 },
        { ", \"In msg nelems\": 250000, \"Out msg nelems\": 250000, \"dtype\": \"Float\", \"Group size\": 2",
          0.8 - 1e6 / 450e9 + 1e6 / 30e9 },
        { "", 0.8 * 15 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char json[4096];
        snprintf(json, sizeof json, coll_json_fmt, cases[i].args);
        mb_proj_trace *t = load_trace(json);
        mb_err err = { 0 };
        mb_proj_gpu here = gpu(132, 67, 989.4, 1000, 2048), there = here;
        here.link_bw = 450e9;
        there.link_bw = 30e9;
        mb_proj_outcome o;
        assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
        CLOSE(o.here.cls[MB_PC_COMM], 0.8);
        CLOSE(o.there.cls[MB_PC_COMM], cases[i].there_comm);
        there.link_bw = 0; /* unknown: kept */
        assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
        CLOSE(o.there.cls[MB_PC_COMM], 0.8);
        mb_proj_trace_free(t);
    }
}

/* A step whose host opens with a synchronize on earlier steps' GPU work
 * (TraceLens's H100 Qwen1.5 trace: 14.1 ms of cudaDeviceSynchronize on the
 * warm-up's kernels, then 32.5 ms of launches the GPU ran in 35.2 ms): that
 * wait is no host time of the step, or the host's floor (its ProfilerStep,
 * 47.2 ms) outweighs the GPU's step. Here: ProfilerStep [1.000, 1.045) s, a
 * synchronize [1.0001, 1.0141) on a kernel launched before the trace, two
 * kernels of 20 ms from 1.01423 s, launched at 1.0142 and 1.03; the closing
 * synchronize after the step. The GPU's step: from the earlier work's end
 * (1.0141) to 1.05423, 40.13 ms; the host's own time 45 - 14 = 31 ms. */
static const char *leading_sync_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"numSms\": 132,"
    " \"maxThreadsPerMultiprocessor\": 2048}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000,"
    " \"dur\": 45000},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 990000, \"dur\": 24100, \"args\": {\"correlation\": 1, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1000100, \"dur\": 14000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1014200,"
    " \"dur\": 10, \"args\": {\"correlation\": 11}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 1014230, \"dur\": 20000, \"args\": {\"correlation\": 11, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1030000,"
    " \"dur\": 10, \"args\": {\"correlation\": 12}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 1034230, \"dur\": 20000, \"args\": {\"correlation\": 12, \"stream\": 7, \"device\": 0,"
    " \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1045100, \"dur\": 9140}\n"
    "]}\n";

static void test_trace_leading_sync(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(leading_sync_json);
    mb_err err = { 0 };
    mb_proj_gpu here = gpu(132, 67, 989.4, 1000, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, NULL, 1, &o, &err), MB_OK);
    CLOSE(o.here.step, 0.04013); /* the GPU's step, as the step table's; the host's floor was 45 ms */
    CLOSE(o.here.gpu_busy, 0.040);
    mb_proj_trace_free(t);
}

/* Calibrated to the loop's step without the profiler (the scenario's step
 * is 2.0 + 0.2 x scale, test_relay_host_scale): 2.15 s gives scale 0.75;
 * onto 10x the bandwidth (kernels 0.1 s) the step re-laid at that scale is
 * L1 0-0.0075, K1 0.015-0.115, S1 0.1225, L2 0.175, K2 0.19-0.29, S2
 * 0.2975, the step 0.2975 + 0.0525 = 0.35. A loop slower than the trace
 * keeps the trace (1); one faster than the GPU's part gets 0. */
static void test_trace_calibrate(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(trace_json);
    mb_err err = { 0 };
    mb_proj_gpu here = gpu(132, 67, 989.4, 1000, 2048), there = gpu(132, 67, 989.4, 10000, 2048);
    double scale, traced, floor_s;
    assert_int_equal(mb_proj_trace_calibrate(t, &here, 2.15, &scale, &traced, &floor_s, &err), MB_OK);
    assert_true(fabs(scale - 0.75) < 1e-3);
    CLOSE(traced, 2.2);
    CLOSE(floor_s, 2.0);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, &there, 0.75, &o, &err), MB_OK);
    CLOSE(o.here.step, 2.15);
    CLOSE(o.there.step, 0.35);
    assert_int_equal(mb_proj_trace_calibrate(t, &here, 3.0, &scale, &traced, &floor_s, &err), MB_OK);
    CLOSE(scale, 1);
    assert_int_equal(mb_proj_trace_calibrate(t, &here, 1.5, &scale, &traced, &floor_s, &err), MB_OK);
    CLOSE(scale, 0);
    CLOSE(floor_s, 2.0);
    mb_proj_trace_free(t);
}

/* The grid and block a trace records reach the wave count: a bf16 GEMM
 * kernel of 132 blocks of 1024 threads fills one wave on 132 SMs and needs
 * two on 114 SMs of the same per-SM rate, so its 1 ms becomes 2 ms; the
 * sync after it waits for it, and the 1.1 ms step becomes 2.1 ms. */
static const char *waves_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 1, \"tid\": 1, \"ts\": 1000,"
    " \"dur\": 1100},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1000,"
    " \"dur\": 10, \"args\": {\"correlation\": 21}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 1020, \"dur\": 1000, \"args\": {\"correlation\": 21, \"stream\": 7, \"device\": 0,"
    " \"grid\": [132, 1, 1], \"block\": [1024, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1030, \"dur\": 995}\n"
    "]}\n";

static void test_trace_waves(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(waves_json);
    mb_err err = { 0 };
    mb_proj_gpu here = gpu(132, 66, 132, 3000, 1024), there = gpu(114, 57, 114, 3000, 1024);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
    CLOSE(o.here.step, 1.1e-3);
    CLOSE(o.there.step, 2.1e-3);
    CLOSE(o.there.cls[MB_PC_TENSOR], 2e-3);
    assert_int_equal(o.compute_bound, 1);
    mb_proj_trace_free(t);
}

/* cuDNN's attention (torch 2.11's SDPA on Hopper): the kernels carry the
 * External id of aten::_cudnn_attention_forward / _backward, [b, h, l, d] =
 * [2, 4, 256, 64] bf16. Forward 4 b h l s d = 134217728 FLOPs, bytes
 * 2 x (2 b h l d + 2 b h s d) = 1048576: I = 128; the backward 2.5x the
 * FLOPs: I = 320. The target has twice the bandwidth and the same math:
 * ridge 990e12 / 6e12 = 165, so g = 1 - 128 / 330 forward and 165 / 640
 * backward; each 1 ms kernel takes 0.5^g ms. Both run back to back after
 * 20 us, the sync ends 5 us after the second, the step 75 us later: the
 * step is 0.1 ms + both kernels. Attention is matrix math in the split
 * and its own kind in the kernel time. cuDNN names the kernels "f16" for
 * bf16 too: the ops' bf16 inputs decide (the GPUs here have no fp16 peak; a
 * kernel read as fp16 would take the fp32 one's ridge). */
static const char *attention_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000,"
    " \"dur\": 2100},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::_cudnn_attention_forward\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1000, \"dur\": 12, \"args\": {\"External id\": 31, \"Input Dims\": [[2, 4, 256, 64], [2, 4, 256, 64],"
    " [2, 4, 256, 64], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"\","
    " \"Scalar\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1001,"
    " \"dur\": 10, \"args\": {\"correlation\": 31, \"External id\": 31}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16\","
    " \"pid\": 0, \"tid\": 7, \"ts\": 1020, \"dur\": 1000, \"args\": {\"correlation\": 31, \"External id\": 31,"
    " \"stream\": 7, \"device\": 0, \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::_cudnn_attention_backward\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1013, \"dur\": 12, \"args\": {\"External id\": 32, \"Input Dims\": [[2, 4, 256, 64], [2, 4, 256, 64],"
    " [2, 4, 256, 64], [2, 4, 256, 64], [2, 4, 256, 64], [2, 4, 256, 1]], \"Input type\": [\"c10::BFloat16\","
    " \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"float\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1014,"
    " \"dur\": 10, \"args\": {\"correlation\": 32, \"External id\": 32}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16\","
    " \"pid\": 0, \"tid\": 7, \"ts\": 2020, \"dur\": 1000, \"args\": {\"correlation\": 32, \"External id\": 32,"
    " \"stream\": 7, \"device\": 0, \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1030, \"dur\": 1995}\n"
    "]}\n";

static void test_trace_attention(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(attention_json);
    mb_err err = { 0 };
    mb_proj_gpu here = gpu(132, 67, 990, 3000, 2048), there = gpu(132, 67, 990, 6000, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
    double fwd = 1e-3 * pow(0.5, 1 - 128.0 / 330), bwd = 1e-3 * pow(0.5, 165.0 / 640);
    CLOSE(o.here.step, 2.1e-3);
    CLOSE(o.here.kernel[MB_PK_ATTENTION], 2e-3);
    CLOSE(o.here.cls[MB_PC_TENSOR], 2e-3);
    CLOSE(o.there.kernel[MB_PK_ATTENTION], fwd + bwd);
    CLOSE(o.there.cls[MB_PC_TENSOR], fwd + bwd);
    CLOSE(o.there.kernel[MB_PK_MEMORY] + o.there.kernel[MB_PK_GEMM] + o.there.kernel[MB_PK_CONV], 0);
    CLOSE(o.there.step, 0.1e-3 + fwd + bwd);
    assert_int_equal(o.compute_bound, 1); /* the backward (g < 0.5); the forward is memory-bound */
    assert_int_equal(o.memory_bound, 1);
    mb_proj_trace_free(t);
}

/* A sparse matmul (torch.spmm: aten::mm > aten::_sparse_addmm > aten::addmm >
 * aten::sparse_dim) records the dense shape [2708, 2708] @ [2708, 16]: its
 * kernel took 235 MFLOP and, read as compute-bound, ran 1.4x faster on a GPU
 * of twice the fp32 math and the same bandwidth. Its op dropped, the kernel
 * has no work from shapes: held by the bandwidth, unchanged. */
static const char *sparse_json =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000,"
    " \"dur\": 1100},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 1000, \"dur\": 20,"
    " \"args\": {\"External id\": 40, \"Input Dims\": [[2708, 2708], [2708, 16]], \"Input type\": [\"float\","
    " \"float\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": 1, \"ts\": 1002, \"dur\": 16,"
    " \"args\": {\"External id\": 41, \"Input Dims\": [[2708, 16], [2708, 2708], [2708, 16], [], []],"
    " \"Input type\": [\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::sparse_dim\", \"pid\": 1, \"tid\": 1, \"ts\": 1003,"
    " \"dur\": 1, \"args\": {\"External id\": 42}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1005,"
    " \"dur\": 10, \"args\": {\"correlation\": 41, \"External id\": 41}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void cusparse::csrmm_v2_kernel<float>\", \"pid\": 0,"
    " \"tid\": 7, \"ts\": 1020, \"dur\": 1000, \"args\": {\"correlation\": 41, \"External id\": 41, \"stream\": 7,"
    " \"device\": 0, \"grid\": [100000, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 1030, \"dur\": 995}\n"
    "]}\n";

static void test_trace_sparse(void **s)
{
    (void)s;
    mb_proj_trace *t = load_trace(sparse_json);
    mb_err err = { 0 };
    mb_proj_gpu here = gpu(132, 67, 990, 3000, 2048), there = gpu(132, 134, 990, 3000, 2048);
    mb_proj_outcome o;
    assert_int_equal(mb_proj_trace_run(t, &here, &there, 1, &o, &err), MB_OK);
    assert_int_equal(o.with_shapes, 0);
    CLOSE(o.here.step, o.there.step);
    mb_proj_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waves),
        cmocka_unit_test(test_resident),
        cmocka_unit_test(test_gamma),
        cmocka_unit_test(test_sustained),
        cmocka_unit_test(test_kernel_overhead),
        cmocka_unit_test(test_sdpa_flops),
        cmocka_unit_test(test_kernel_memory_bound),
        cmocka_unit_test(test_kernel_compute_waves),
        cmocka_unit_test(test_kernel_wave_quantization),
        cmocka_unit_test(test_kernel_roofline_mix),
        cmocka_unit_test(test_kernel_latency_and_no_peak),
        cmocka_unit_test(test_relay_identity),
        cmocka_unit_test(test_relay_exposes_host),
        cmocka_unit_test(test_relay_host_bound),
        cmocka_unit_test(test_relay_host_scale),
        cmocka_unit_test(test_relay_backpressure),
        cmocka_unit_test(test_relay_slower_gpu),
        cmocka_unit_test(test_datasheet_gpu),
        cmocka_unit_test(test_trace_projection), cmocka_unit_test(test_trace_optimizer_steps),
        cmocka_unit_test(test_trace_kernel_wait),
        cmocka_unit_test(test_trace_no_step),
        cmocka_unit_test(test_split_overlap),
        cmocka_unit_test(test_collective_link),
        cmocka_unit_test(test_trace_leading_sync),
        cmocka_unit_test(test_trace_calibrate),
        cmocka_unit_test(test_trace_waves),
        cmocka_unit_test(test_trace_attention),
        cmocka_unit_test(test_trace_sparse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
