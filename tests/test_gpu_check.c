/* What the GPU benchmarks count and how they check their output
 * (kernels/shared/gpu_check.c, harness/platform/gpu_arch.c), on host data: known answers for
 * bytes and FLOPs, closed forms against an emulation of the device code, and
 * corrupted outputs that the checks must reject. Also: without a GPU every
 * GPU backend skips with the CUDA error text, and the context says why. */
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

#include "component.h"
#include "formulas.h"
#include "gpu_arch.h"
#include "gpu_check.h"
#include "gpu_hooks.h"
#include "case_report.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))


/* ---- copy ------------------------------------------------------------------ */

static void test_copy_bytes(void **s)
{
    (void)s;
    CLOSE(mb_copy_bytes(MB_COPY_H2D, 1 << 20, 10), 10.0 * (1 << 20));
    CLOSE(mb_copy_bytes(MB_COPY_D2H, 4096, 1000), 4096000.0);
    CLOSE(mb_copy_bytes(MB_COPY_BIDIR, 1 << 20, 10), 20.0 * (1 << 20)); /* both payloads */
    CLOSE(mb_copy_bytes(MB_COPY_D2D, 1 << 20, 10), 20.0 * (1 << 20));   /* read + write */
}

static void test_pattern(void **s)
{
    (void)s;
    size_t n = 4099; /* a tail that is not a whole word */
    unsigned char *a = malloc(n), *b = malloc(n);
    mb_pattern_fill(a, n, 1);
    mb_pattern_fill(b, n, 2);
    size_t first = 0, zeros = 0;
    for (size_t i = 0; i < n; i++)
        zeros += a[i] == 0;
    assert_true(zeros < n / 64); /* random bytes, not zeros */
    assert_int_equal(mb_pattern_check(a, n, 1, &first), 0);
    assert_int_equal(first, n);
    assert_true(mb_pattern_check(b, n, 1, &first) > n / 2); /* another seed: "stale" data fails */
    a[4097] ^= 0x10; /* one bit, in the tail */
    assert_int_equal(mb_pattern_check(a, n, 1, &first), 1);
    assert_int_equal(first, 4097);
    a[4097] ^= 0x10;
    a[0] ^= 1;
    a[100] = (unsigned char)(a[100] + 1);
    assert_int_equal(mb_pattern_check(a, n, 1, &first), 2);
    assert_int_equal(first, 0);
    /* Filling a range of a shorter length gives the prefix of the stream. */
    mb_pattern_fill(b, 13, 1);
    assert_int_equal(mb_pattern_check(b, 13, 1, &first), 0);
    free(a);
    free(b);
}

/* ---- membw ------------------------------------------------------------------ */

static void test_membw_bytes(void **s)
{
    (void)s;
    CLOSE(mb_membw_bytes(MB_MEMBW_READ, 1000, 4), 4000);
    CLOSE(mb_membw_bytes(MB_MEMBW_WRITE, 1000, 4), 4000);
    CLOSE(mb_membw_bytes(MB_MEMBW_COPY, 1000, 4), 8000);
    CLOSE(mb_membw_bytes(MB_MEMBW_TRIAD, 1000, 4), 12000);
    CLOSE(mb_membw_bytes(MB_MEMBW_TRIAD, 1 << 25, 8), 3.0 * 8 * (1 << 25)); /* BabelStream default: 805 MB */
    assert_int_equal(mb_membw_arrays(MB_MEMBW_READ), 1);
    assert_int_equal(mb_membw_arrays(MB_MEMBW_COPY), 2);
    assert_int_equal(mb_membw_arrays(MB_MEMBW_TRIAD), 3);
}

/* The grid shapes, known answers: H100 SXM, 132 SMs x 8 resident blocks of
 * 256 threads; 256 MiB of float4 = 16 Mi vectors. */
static void test_membw_grid(void **s)
{
    (void)s;
    const size_t nv = (256u << 20) / 16;
    assert_int_equal(mb_membw_grid_blocks(nv, 256, 132, 8, 1), 1056);  /* one wave */
    assert_int_equal(mb_membw_grid_blocks(nv, 256, 132, 8, 4), 4224);  /* four */
    assert_int_equal(mb_membw_grid_blocks(nv, 256, 132, 8, 0), 16384); /* 16 Mi / (256 x 4) */
    assert_int_equal(mb_membw_grid_blocks(nv + 1, 256, 132, 8, 0), 16385); /* a partial step */
    /* never more blocks than vectors for their threads: 1000 vectors, 4 blocks */
    assert_int_equal(mb_membw_grid_blocks(1000, 256, 132, 8, 1), 4);
    assert_int_equal(mb_membw_grid_blocks(1000, 256, 132, 8, 0), 1);
    assert_int_equal(mb_membw_grid_blocks(1, 256, 132, 8, 0), 1);
}

static void test_membw_inputs(void **s)
{
    (void)s;
    double lo = 2, hi = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        for (int a = 0; a < 3; a++) {
            double v = mb_membw_input(7, a, i);
            assert_true(v >= 1.0 && v < 2.0);
            assert_true((double)(float)v == v); /* exact in fp32 too */
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
    }
    assert_true(lo < 1.01 && hi > 1.99); /* spread over [1, 2) */
    assert_true(ldexp(mb_membw_input(7, 2, 11), 12) == floor(ldexp(mb_membw_input(7, 2, 11), 12))); /* 12 fraction bits */
    assert_true(mb_membw_input(7, 0, 5) != mb_membw_input(7, 1, 5));
    assert_true(mb_membw_write_value(0) != mb_membw_write_value(1));
    assert_true((double)(float)mb_membw_write_value(4095) == mb_membw_write_value(4095));
}

/* What the device leaves in the output array, emulated in the array's type. */
static void *emulate(mb_membw_op op, int fp64, size_t n, uint64_t seed, uint64_t calls)
{
    void *out = malloc(n * (fp64 ? 8 : 4));
    for (size_t i = 0; i < n; i++) {
        double v;
        if (op == MB_MEMBW_WRITE)
            v = mb_membw_write_value(calls - 1);
        else if (op == MB_MEMBW_COPY)
            v = mb_membw_input(seed, 0, i);
        else if (fp64)
            v = fma(MB_MEMBW_SCALAR, mb_membw_input(seed, 2, i), mb_membw_input(seed, 1, i));
        else
            v = fmaf((float)MB_MEMBW_SCALAR, (float)mb_membw_input(seed, 2, i), (float)mb_membw_input(seed, 1, i));
        if (fp64)
            ((double *)out)[i] = v;
        else
            ((float *)out)[i] = (float)v;
    }
    return out;
}

static void test_membw_check(void **s)
{
    (void)s;
    const size_t n = 10000;
    const mb_membw_op ops[] = { MB_MEMBW_WRITE, MB_MEMBW_COPY, MB_MEMBW_TRIAD };
    for (int fp64 = 0; fp64 <= 1; fp64++) {
        for (size_t k = 0; k < 3; k++) {
            size_t first = 0;
            double got = 0, want = 0;
            void *out = emulate(ops[k], fp64, n, 42, 5);
            assert_int_equal(mb_membw_check(ops[k], fp64, out, n, 42, 5, &first, &got, &want), 0);
            /* A corrupted element, and one off by one ulp, are both caught. */
            if (fp64) {
                ((double *)out)[1234] = nextafter(((double *)out)[1234], 10.0);
                ((double *)out)[9999] = 0;
            } else {
                ((float *)out)[1234] = nextafterf(((float *)out)[1234], 10.0f);
                ((float *)out)[9999] = 0;
            }
            assert_int_equal(mb_membw_check(ops[k], fp64, out, n, 42, 5, &first, &got, &want), 2);
            assert_int_equal(first, 1234);
            assert_true(got != want);
            free(out);
        }
        /* The write check looks at the last call's value: 4 calls' data is
         * not 5 calls' data. */
        size_t first;
        double got, want;
        void *stale = emulate(MB_MEMBW_WRITE, fp64, n, 42, 4);
        assert_int_equal(mb_membw_check(MB_MEMBW_WRITE, fp64, stale, n, 42, 5, &first, &got, &want), n);
        free(stale);
        /* A triad that never ran leaves a = its input: (nearly) all wrong. */
        void *untouched = malloc(n * (fp64 ? 8 : 4));
        for (size_t i = 0; i < n; i++) {
            if (fp64)
                ((double *)untouched)[i] = mb_membw_input(42, 0, i);
            else
                ((float *)untouched)[i] = (float)mb_membw_input(42, 0, i);
        }
        assert_true(mb_membw_check(MB_MEMBW_TRIAD, fp64, untouched, n, 42, 1, &first, &got, &want) > n - 10);
        free(untouched);
        /* A copy that never ran leaves c = its own input (array 2), not a. */
        void *c0 = malloc(n * (fp64 ? 8 : 4));
        for (size_t i = 0; i < n; i++) {
            if (fp64)
                ((double *)c0)[i] = mb_membw_input(42, 2, i);
            else
                ((float *)c0)[i] = (float)mb_membw_input(42, 2, i);
        }
        assert_true(mb_membw_check(MB_MEMBW_COPY, fp64, c0, n, 42, 1, &first, &got, &want) > n - 10);
        free(c0);
    }
}

/* The device's fp32 read: groups of 16 summed in float, groups in double. */
static double emulate_read_f32(size_t n, uint64_t seed)
{
    double acc = 0;
    for (size_t i = 0; i < n; i += 16) {
        float g = 0;
        for (size_t j = i; j < i + 16 && j < n; j++)
            g += (float)mb_membw_input(seed, 0, j);
        acc += g;
    }
    return acc;
}

static void test_membw_sum(void **s)
{
    (void)s;
    const size_t n = 1 << 20;
    double want, rel;
    double dev = emulate_read_f32(n, 9);
    /* The device's float/double sums are exact: equal, not merely close. */
    assert_int_equal(mb_membw_sum_check(dev, n, 9, 0, &want, &rel), 0);
    assert_true(rel == 0);
    long double ld = 0;
    for (size_t i = 0; i < n; i++)
        ld += mb_membw_input(9, 0, i);
    assert_true((double)ld == want);
    /* One element skipped (one grid-stride step that never ran) is caught,
     * and so is one element read as a neighbour's value. */
    assert_int_equal(mb_membw_sum_check(dev - mb_membw_input(9, 0, 77), n, 9, 0, &want, &rel), 1);
    double swapped = dev - mb_membw_input(9, 0, 77) + mb_membw_input(9, 0, 78);
    assert_int_equal(mb_membw_sum_check(swapped, n, 9, 0, &want, &rel),
                     mb_membw_input(9, 0, 77) == mb_membw_input(9, 0, 78) ? 0 : 1);
    assert_int_equal(mb_membw_sum_check(NAN, n, 9, 0, &want, &rel), 1);
    assert_int_equal(mb_membw_sum_check(want, n, 9, 1, &want, &rel), 0);
}

/* ---- peak ---------------------------------------------------------------------- */

static void test_peak_counts(void **s)
{
    (void)s;
    CLOSE(mb_peak_flops(MB_PEAK_FP32, 1000, 16), 1000.0 * MB_PEAK_CHAINS * 16 * 2);
    CLOSE(mb_peak_flops(MB_PEAK_FP64, 1000, 16), 1000.0 * MB_PEAK_CHAINS * 16 * 2);
    CLOSE(mb_peak_flops(MB_PEAK_FP16, 1000, 16), 1000.0 * MB_PEAK_CHAINS * 16 * 4); /* half2 */
    /* The largest exact counts: x0 <= 64 plus the steps stay exact. */
    assert_int_equal(mb_peak_max_iters(MB_PEAK_FP16), 1984);
    assert_true(64 + mb_peak_max_iters(MB_PEAK_FP16) <= 2048);
    assert_true(64 + mb_peak_max_iters(MB_PEAK_FP32) <= (1L << 24));
    assert_int_equal(mb_peak_max_iters(MB_PEAK_FP32) % MB_PEAK_UNROLL, 0);
    for (uint64_t t = 0; t < 1000; t++)
        for (int j = 0; j < 16; j++) {
            int x0 = mb_peak_x0(3, t, j);
            assert_true(x0 >= 1 && x0 <= 64);
        }
}

/* Runs the chains as the device does (fmaf in float) and checks the closed
 * form holds exactly. */
static void test_peak_closed_form(void **s)
{
    (void)s;
    const size_t threads = 257;
    const long iters = 4096;
    double *out = malloc(threads * sizeof *out);
    for (size_t t = 0; t < threads; t++) {
        float x[MB_PEAK_CHAINS];
        volatile float a = 1.0f, b = 1.0f;
        for (int j = 0; j < MB_PEAK_CHAINS; j++)
            x[j] = (float)mb_peak_x0(5, t, j);
        for (long it = 0; it < iters; it++)
            for (int j = 0; j < MB_PEAK_CHAINS; j++)
                x[j] = fmaf(x[j], a, b);
        double sum = 0;
        for (int j = 0; j < MB_PEAK_CHAINS; j++)
            sum += x[j];
        out[t] = sum;
    }
    size_t first = 0;
    assert_int_equal(mb_peak_check(MB_PEAK_FP32, out, threads, 5, iters, &first), 0);
    /* Fewer steps than claimed (a kernel that stopped early) fails. */
    assert_int_equal(mb_peak_check(MB_PEAK_FP32, out, threads, 5, iters + 16, &first), threads);
    out[200] += 1;
    assert_int_equal(mb_peak_check(MB_PEAK_FP32, out, threads, 5, iters, &first), 1);
    assert_int_equal(first, 200);
    /* fp16: twice the chains per thread, so a different expected sum. */
    assert_true(mb_peak_expected(MB_PEAK_FP16, 5, 0, 64) != mb_peak_expected(MB_PEAK_FP32, 5, 0, 64));
    free(out);
}

/* fp16 as the device runs it: 16 chains of integers up to 2048 (exact in
 * half as in float), summed in float; at the largest exact count the sum
 * still equals the closed form, and one step more per chain would not. */
static void test_peak_fp16_closed_form(void **s)
{
    (void)s;
    const long iters = mb_peak_max_iters(MB_PEAK_FP16);
    for (uint64_t t = 0; t < 300; t++) {
        float sum = 0;
        for (int j = 0; j < 2 * MB_PEAK_CHAINS; j++) {
            float x = (float)mb_peak_x0(11, t, j);
            for (long it = 0; it < iters; it++)
                x = fmaf(x, 1.0f, 1.0f);
            assert_true(x <= 2048.0f); /* half's exact integers end at 2048 */
            sum += x;
        }
        assert_true((double)sum == mb_peak_expected(MB_PEAK_FP16, 11, t, iters));
        assert_true((double)sum != mb_peak_expected(MB_PEAK_FP16, 11, t, iters - MB_PEAK_UNROLL));
    }
}

/* The starting values: every value of [1, 64] occurs, the chains of one
 * thread are not copies of each other (chains 0 and 10 take the same bits
 * of different hashes), and threads differ. */
static void test_peak_x0_spread(void **s)
{
    (void)s;
    int seen[65] = { 0 };
    int same_0_10 = 0, same_thread = 0;
    for (uint64_t t = 0; t < 2000; t++) {
        for (int j = 0; j < 2 * MB_PEAK_CHAINS; j++)
            seen[mb_peak_x0(1, t, j)]++;
        same_0_10 += mb_peak_x0(1, t, 0) == mb_peak_x0(1, t, 10);
        int eq = 1;
        for (int j = 0; j < MB_PEAK_CHAINS; j++)
            eq &= mb_peak_x0(1, t, j) == mb_peak_x0(1, t + 1, j);
        same_thread += eq;
    }
    for (int v = 1; v <= 64; v++)
        assert_true(seen[v] > 200); /* 32000 draws: ~500 each */
    assert_true(same_0_10 < 100);   /* ~31 by chance */
    assert_int_equal(same_thread, 0);
    assert_true(mb_peak_x0(1, 7, 3) != mb_peak_x0(2, 7, 3) || mb_peak_x0(1, 7, 4) != mb_peak_x0(2, 7, 4));
}

/* ---- the architecture table ------------------------------------------------------ */

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mb_test_arch_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_arch_table(void **s)
{
    (void)s;
    mb_gpu_arch_row a;
    mb_err err = { 0 };
    double fp32 = 0, fp64 = 0, fp16 = 0, v = 0;
    /* The shipped table, CUDA-core keys: H100 SXM fp32 = 132 SMs x 1980 MHz
     * x 256 = 66.9 TFLOP/s, fp64 33.5, fp16 (HFMA2) 133.8. */
    char path[1024];
    snprintf(path, sizeof path, "%s/gpu-arch.ini", getenv("MLBENCH_CONFIG_DIR") ? getenv("MLBENCH_CONFIG_DIR")
                                                                                 : MB_SOURCE_CONFIG_DIR);
    assert_int_equal(mb_gpu_arch_rate(path, 9, 0, "NVIDIA H100 80GB HBM3", "fp32", &fp32, &a, &err), MB_OK);
    assert_int_equal(mb_gpu_arch_rate(path, 9, 0, "NVIDIA H100 80GB HBM3", "cores_fp64", &fp64, &a, &err), MB_OK);
    assert_int_equal(mb_gpu_arch_rate(path, 9, 0, "NVIDIA H100 80GB HBM3", "cores_fp16", &fp16, &a, &err), MB_OK);
    CLOSE(fp32, 256);
    assert_true(fabs(mb_gpu_peak_flops(132, 1980e6, fp32) / 1e12 - 66.9) < 0.05);
    assert_true(fabs(mb_gpu_peak_flops(132, 1980e6, fp64) / 1e12 - 33.45) < 0.05);
    assert_true(fabs(mb_gpu_peak_flops(132, 1980e6, fp16) / 1e12 - 133.8) < 0.05);
    assert_true(strlen(a.source) > 0);
    assert_string_equal(a.name, "Hopper (GH100)");
    /* The CUDA cores are not the tensor cores: fp64/fp16 are the DMMA and
     * HMMA rates, twice and eight times the DFMA and HFMA2 ones. */
    assert_int_equal(mb_gpu_arch_rate(path, 9, 0, NULL, "fp64", &v, NULL, &err), MB_OK);
    CLOSE(v, 2 * fp64);
    assert_int_equal(mb_gpu_arch_rate(path, 9, 0, NULL, "fp16", &v, NULL, &err), MB_OK);
    CLOSE(v, 8 * fp16);
    /* A100: 108 x 1410 MHz x 128 = 19.5 TFLOP/s. */
    assert_int_equal(mb_gpu_arch_rate(path, 8, 0, NULL, "fp32", &v, NULL, &err), MB_OK);
    assert_true(fabs(mb_gpu_peak_flops(108, 1410e6, v) / 1e12 - 19.49) < 0.05);
    /* B200 has CUDA-core fp64 but no checked cores_fp16: a skip that names the key. */
    assert_int_equal(mb_gpu_arch_rate(path, 10, 0, NULL, "cores_fp64", &v, NULL, &err), MB_OK);
    assert_true(fabs(mb_gpu_peak_flops(148, 1965e6, v) / 1e12 - 37.2) < 0.05);
    mb_err e0 = { 0 };
    assert_int_equal(mb_gpu_arch_rate(path, 10, 0, NULL, "cores_fp16", &v, NULL, &e0), MB_ESKIP);
    assert_non_null(strstr(e0.msg, "cores_fp16"));
    /* Unknown architecture: a skip that says which. */
    mb_err e1 = { 0 };
    assert_int_equal(mb_gpu_arch_rate(path, 1, 0, NULL, "fp32", &v, &a, &e1), MB_ESKIP);
    assert_non_null(strstr(e1.msg, "sm_10"));

    char *p = write_tmp("[sm_90]\nfp32 = 256\ncores_fp16 = fast\n");
    mb_err e2 = { 0 };
    assert_int_equal(mb_gpu_arch_rate(p, 9, 0, NULL, "fp32", &v, &a, &e2), MB_EUSAGE);
    assert_non_null(strstr(e2.msg, ":3:")); /* file:line */
    assert_non_null(strstr(e2.msg, "cores_fp16"));
    unlink(p);
    p = write_tmp("[sm_90]\nfp32 = 256\ncores_tf32 = 1\n");
    mb_err e3 = { 0 };
    assert_int_equal(mb_gpu_arch_rate(p, 9, 0, NULL, "fp32", &v, &a, &e3), MB_EUSAGE);
    assert_non_null(strstr(e3.msg, "unknown key 'cores_tf32'"));
    unlink(p);
    p = write_tmp("[sm_80]\nfp32 = 128\n[sm_90]\nfp32 = 256 ; comment\n");
    assert_int_equal(mb_gpu_arch_rate(p, 9, 0, NULL, "fp32", &v, &a, &err), MB_OK);
    CLOSE(v, 256);
    mb_err e4 = { 0 };
    assert_int_equal(mb_gpu_arch_rate(p, 9, 0, NULL, "cores_fp16", &v, &a, &e4), MB_ESKIP); /* missing */
    unlink(p);
    mb_err e5 = { 0 };
    assert_int_equal(mb_gpu_arch_rate("/nonexistent/gpu-arch.ini", 9, 0, NULL, "fp32", &v, &a, &e5), MB_ESKIP);
}

/* ---- without a GPU ----------------------------------------------------------------- */

static void test_probes_say_why(void **s)
{
    (void)s;
    /* Through the registry: the tables come from libmlbench_cuda.so, or are
     * placeholders that carry the loader's message. */
    const mb_component_ops *ops[] = { mb_registry_find("copy", "cuda"), mb_registry_find("membw", "cuda"),
                                      mb_registry_find("peak", "cuda"), mb_registry_find("launch", "cuda") };
    for (size_t i = 0; i < 4; i++) {
        assert_non_null(ops[i]);
        assert_true(ops[i]->uses_gpu);
        mb_err why = { 0 };
        int rc = ops[i]->probe(NULL, &why);
        if (rc == MB_OK)
            continue; /* a GPU is here: test_gpu_io covers it */
        assert_int_equal(rc, MB_ESKIP);
        /* With CUDA built in: the CUDA error text; without: "not built in". */
        assert_true(strstr(why.msg, "cuda") || strstr(why.msg, "CUDA"));
        assert_true(strlen(why.msg) > 20);
    }
    assert_true(ops[3]->latency_first);
    assert_string_equal(ops[0]->rate_unit, "GB/s");
}

static void test_context_without_gpu(void **s)
{
    (void)s;
    cJSON *ctx = cJSON_CreateObject();
    mb_gpu_context_add(ctx);
    cJSON *gpus = cJSON_GetObjectItemCaseSensitive(ctx, "gpus");
    assert_true(cJSON_IsArray(gpus));
    cJSON *why = cJSON_GetObjectItemCaseSensitive(ctx, "gpu_unavailable");
    if (cJSON_GetArraySize(gpus) == 0) {
        assert_true(cJSON_IsString(why));
        assert_true(strlen(why->valuestring) > 10);
    } else {
        cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(gpus, 0), "name");
        assert_true(cJSON_IsString(name));
    }
    cJSON_Delete(ctx);
    /* The monitor is a no-op without NVML or a GPU, and never crashes. */
    mb_report r;
    mb_report_init(&r);
    void *snap = mb_gpu_monitor_begin();
    mb_gpu_monitor_end(snap, &r);
    if (snap == NULL)
        assert_int_equal(r.n_metrics, 0);
    mb_report_free(&r);
}

/* launch op=stream_sync's check: a sync that waits leaves each run's value in
 * the host-mapped word; one that returned early leaves the previous run's. */
static void test_sync_mirror(void **s)
{
    (void)s;
    for (long r = 0; r < 100000; r++) {
        assert_true(mb_sync_mirror_value(r) != 0); /* 0 is the word's value before run 0 */
        assert_true(mb_sync_mirror_value(r) != mb_sync_mirror_value(r + 1));
    }
    assert_int_equal(mb_sync_mirror_value(0), 2654435761u);
    char msg[320];
    mb_sync_mirror m = { 0 };
    assert_int_equal(mb_sync_mirror_check(&m, msg, sizeof msg), -1); /* nothing ran: not verified */
    uint32_t word = 0;
    for (long r = 0; r < 50; r++) { /* a sync that waits: the host sees each run's value */
        m.runs++;
        word = mb_sync_mirror_value(r);
        mb_sync_mirror_record(&m, r, word);
    }
    assert_int_equal(mb_sync_mirror_check(&m, msg, sizeof msg), 0);
    assert_int_equal(m.checked, 50);
    /* run 50's sync returns before its kernel ran: the word still holds run 49's. */
    m.runs++;
    mb_sync_mirror_record(&m, 50, word);
    assert_int_equal(mb_sync_mirror_check(&m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "after 1 of 51 syncs"));
    assert_non_null(strstr(msg, "run 50"));
    /* a run whose word was never read is not verified either */
    mb_sync_mirror m2 = { .runs = 3 };
    for (long r = 0; r < 2; r++)
        mb_sync_mirror_record(&m2, r, mb_sync_mirror_value(r));
    assert_int_equal(mb_sync_mirror_check(&m2, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "3 timed runs but 2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_bytes),       cmocka_unit_test(test_pattern),
        cmocka_unit_test(test_membw_bytes),      cmocka_unit_test(test_membw_grid),
        cmocka_unit_test(test_membw_inputs),
        cmocka_unit_test(test_membw_check),      cmocka_unit_test(test_membw_sum),
        cmocka_unit_test(test_peak_counts),      cmocka_unit_test(test_peak_closed_form),
        cmocka_unit_test(test_peak_fp16_closed_form), cmocka_unit_test(test_peak_x0_spread),
        cmocka_unit_test(test_arch_table),       cmocka_unit_test(test_probes_say_why),
        cmocka_unit_test(test_context_without_gpu),
        cmocka_unit_test(test_sync_mirror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
