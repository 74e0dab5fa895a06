/* The GPU components (copy, membw, peak, launch) end to end through their ops
 * tables: setup, a warm-up run, three timed runs, verification, report,
 * teardown, as the harness runs them. Needs a CUDA device: exits 77
 * (skipped) without one, printing the CUDA error text. Rates (the median of
 * the timed runs) are checked against the reported theoretical peak: never
 * above it (a wrong byte count or a broken timer), and where the hardware
 * side is on the device itself (DRAM for d2d and membw at >= 4x L2, the
 * CUDA cores for peak) not far below it either. Host<->device copies get no
 * lower bound: a VM's PCIe path is not the code's doing. A failing case is
 * listed and the next one still runs; each test fails at its end.
 * Estimated run time on an H100: about 10-20 s (most of it pattern checks on
 * the host and the CUDA context). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "component.h"
#include "formulas.h"
#include "gpu_hooks.h"
#include "params.h"
#include "case_report.h"

/* The composed tables (description + code), as the harness sees them. */
#define COPY (*mb_registry_find("copy", "cuda"))
#define MEMBW (*mb_registry_find("membw", "cuda"))
#define PEAK (*mb_registry_find("peak", "cuda"))
#define LAUNCH (*mb_registry_find("launch", "cuda"))

/* Failures in the current test function: a case that fails is printed and
 * counted, the next one still runs (GPU time is scarce: one run should show
 * every bad case), and the function fails at its end (finish()). */
static int failures;

static void failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  FAILED: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

static void finish(const char *what)
{
    int n = failures;
    failures = 0;
    if (n)
        fail_msg("%d %s check(s) failed (listed above)", n, what);
}

/* What one case gave: the median rate of its timed runs (the statistic the
 * copy backend's PCIe peak choice uses), the peak, and the report's metrics
 * the tests look at (negative when absent). ok is false when it failed. */
typedef struct result {
    bool ok;
    double rate, peak;
    double h2d, d2h, latency_us, p50_us;
    bool has_numa;
} result;

static double metric(const mb_report *r, const char *name)
{
    const mb_metric *m = mb_report_find_metric(r, name);
    return m ? m->value : -1;
}

/* Runs one case as the harness does (kv: name, value, ..., NULL): setup, one
 * warm-up run, timing_start, three timed runs, verify, report, teardown.
 * Checks every run took time, verification passed (every op, launch
 * stream_sync included), and the median rate is not above the reported
 * theoretical peak. */
static result run_case(const mb_component_ops *ops, const char *const *kv)
{
    const char *names[16], *values[16];
    int n = 0;
    for (; kv[2 * n]; n++) {
        names[n] = kv[2 * n];
        values[n] = kv[2 * n + 1];
    }
    result res = { .h2d = -1, .d2h = -1, .latency_us = -1, .p50_us = -1 };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(ops->params, names, values, n, &err);
    if (p == NULL)
        fail_msg("%s/%s params: %s", ops->component, ops->backend, err.msg);
    char *key = mb_params_key(p);
    void *state = NULL;
    double seconds[3] = { 0, 0, 0 };
    int rc = ops->setup(p, &state, &err);
    if (rc != MB_OK) {
        failed("%s/%s %s setup: %s", ops->component, ops->backend, key, err.msg);
        goto done;
    }
    for (int i = -1; i < 3; i++) { /* -1: the warm-up */
        double sec = 0;
        rc = ops->run(state, &sec, &err);
        if (rc != MB_OK || !(sec > 0)) {
            failed("%s/%s %s run: %s (%g s)", ops->component, ops->backend, key, err.msg, sec);
            goto done;
        }
        if (i < 0 && ops->timing_start)
            ops->timing_start(state);
        if (i >= 0)
            seconds[i] = sec;
    }
    double work = ops->work_per_iter(state);
    if (!(work > 0)) {
        failed("%s/%s %s: work per iteration %g", ops->component, ops->backend, key, work);
        goto done;
    }
    res.rate = work / mb_median(seconds, 3) / ops->rate_scale;
    rc = ops->verify(state, &err);
    if (rc != MB_OK) {
        failed("%s/%s %s verify: %s", ops->component, ops->backend, key, err.msg);
        goto done;
    }
    mb_report r;
    mb_report_init(&r);
    ops->report(state, &r);
    res.peak = r.peak;
    res.h2d = metric(&r, "h2d_gbps");
    res.d2h = metric(&r, "d2h_gbps");
    res.latency_us = metric(&r, "latency_us");
    res.p50_us = metric(&r, "latency_p50_us");
    res.has_numa = mb_report_find_info(&r, "gpu_numa_node") != NULL;
    printf("  %-6s %-40s %10.3f %s", ops->component, key, res.rate, ops->rate_unit);
    if (r.peak > 0)
        printf("  (%.2f of peak %.3f: %s)", res.rate / r.peak, r.peak, r.peak_source);
    printf("\n");
    for (int i = 0; i < r.n_notes; i++) {
        printf("    note: %s\n", r.notes[i]);
        /* An unknown GPU NUMA node is said once, in context.gpus[].numa_note. */
        if (strstr(r.notes[i], "NUMA node unknown"))
            failed("%s/%s %s: a row repeats the machine's NUMA note", ops->component, ops->backend, key);
    }
    mb_report_free(&r);
    res.ok = true;
    /* Above the theoretical rate means a wrong count or timer. L2 can
     * serve small membw arrays above DRAM speed: allow some slack. */
    double slack = strcmp(ops->component, "membw") == 0 ? 1.5 : 1.05;
    if (res.peak > 0 && res.rate > slack * res.peak) {
        failed("%s %s: %.3f %s is above %.2f x the peak %.3f", ops->component, key, res.rate, ops->rate_unit,
               slack, res.peak);
        res.ok = false;
    }
done:
    ops->teardown(state);
    free(key);
    mb_params_free(p);
    return res;
}

#define CASE(ops, ...) run_case(&(ops), (const char *const[]){ __VA_ARGS__, NULL })

/* rate >= least x peak, where the peak is known. */
static void at_least(const char *what, result r, double least)
{
    if (r.ok && r.peak > 0 && r.rate < least * r.peak)
        failed("%s: %.3f is below %.2f x the peak %.3f", what, r.rate, least, r.peak);
}

static void test_copy(void **s)
{
    (void)s;
    /* No lower bound on host<->device copies: what a VM's IOMMU and PCIe
     * path give is not the code's doing (the copy suite reports the ratio). */
    result r = CASE(COPY, "direction", "h2d", "memory", "pinned", "size", "4m");
    if (r.ok && !r.has_numa)
        failed("h2d: no gpu_numa_node in the report");
    CASE(COPY, "direction", "h2d", "memory", "wc", "size", "1m");
    CASE(COPY, "direction", "h2d", "memory", "pageable", "size", "64k");
    r = CASE(COPY, "direction", "d2h", "memory", "pinned", "size", "4k");
    /* Small copies are read as latency: device time per 4 KiB copy, back to
     * back behind the gate (about 1-3 us on PCIe). */
    if (r.ok && !(r.latency_us > 0 && r.latency_us < 1000))
        failed("d2h 4k: latency_us %.3f", r.latency_us);
    CASE(COPY, "direction", "d2h", "memory", "pageable", "size", "1m");
    /* bidir: each direction on its own, each under one direction's share of
     * the peak (the peak is both directions); the combined rate counts both
     * payloads over a region that ends after both, so it cannot exceed twice
     * the slower direction. */
    r = CASE(COPY, "direction", "bidir", "memory", "pinned", "size", "4m");
    if (r.ok) {
        if (!(r.h2d > 0 && r.d2h > 0))
            failed("bidir: h2d_gbps %.3f, d2h_gbps %.3f", r.h2d, r.d2h);
        else if (r.peak > 0 && (r.h2d > 1.05 * r.peak / 2 || r.d2h > 1.05 * r.peak / 2))
            failed("bidir: h2d %.2f or d2h %.2f GB/s above one direction's peak %.2f", r.h2d, r.d2h, r.peak / 2);
        else if (r.rate > 1.02 * 2 * (r.h2d < r.d2h ? r.h2d : r.d2h))
            failed("bidir: combined %.2f GB/s above twice the slower direction (h2d %.2f, d2h %.2f)", r.rate,
                   r.h2d, r.d2h);
    }
    /* 256 MiB: src + dst well above any L2 (H100: 50 MB), so the rate is
     * a DRAM rate (read + write counted). An H100 copies at ~0.8-0.9 of its
     * 3.35 TB/s; half means bytes counted once, or the copies not timed as
     * the device ran them. */
    r = CASE(COPY, "direction", "d2d", "size", "256m");
    at_least("d2d 256m", r, 0.5);
    finish("copy");
}

static void expect_copy_skip(const char *dir, const char *mem, const char *why)
{
    const char *names[] = { "direction", "memory" }, *values[] = { dir, mem };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(COPY.params, names, values, 2, &err);
    assert_non_null(p);
    void *state = NULL;
    assert_int_equal(COPY.setup(p, &state, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, why));
    COPY.teardown(state);
    mb_params_free(p);
}

static void test_copy_skips(void **s)
{
    (void)s;
    expect_copy_skip("d2h", "wc", "h2d only");
    /* Pageable copies are host-synchronous: no overlap, so no bidir. */
    expect_copy_skip("bidir", "pageable", "bidir needs pinned memory");
}

static void test_membw(void **s)
{
    (void)s;
    const char *ops[] = { "read", "write", "copy", "triad" };
    /* 128 MiB per array, well above an H100's 50 MB L2 even for read and
     * write (one array): at 64 MiB a replacement policy that keeps part of a
     * streamed array could lift read past the 1.5x slack. */
    for (int i = 0; i < 4; i++) {
        CASE(MEMBW, "op", ops[i], "dtype", "fp32", "size", "128m");
        CASE(MEMBW, "op", ops[i], "dtype", "fp64", "size", "128m");
    }
    /* A size that is not a multiple of the vector width is rounded down. */
    CASE(MEMBW, "op", "triad", "size", "1000004");
    /* The automatic size (>= 4x L2, 256 MiB per array at least) is a DRAM
     * rate: BabelStream gets ~0.9 of an H100's 3.35 TB/s; below 0.6 is a
     * wrong byte count, a grid that does not fill the GPU, or a bad timer. */
    at_least("membw triad (auto size)", CASE(MEMBW, "op", "triad"), 0.6);
    at_least("membw read (auto size)", CASE(MEMBW, "op", "read"), 0.6);
    finish("membw");
}

/* The automatic iteration count and 8 waves: 1-4 ms kernels on an H100, long
 * enough that launch and tail do not count. The peak is SMs x the maximum
 * boost clock: a power-capped GPU runs 10-20% below it, so 0.5 is the floor
 * (a FLOP count or a chain the compiler shortened would be off by 2x). */
static void test_peak(void **s)
{
    (void)s;
    at_least("peak fp32", CASE(PEAK, "dtype", "fp32"), 0.5);
    at_least("peak fp64", CASE(PEAK, "dtype", "fp64"), 0.5);
    at_least("peak fp16", CASE(PEAK, "dtype", "fp16"), 0.5);
    /* A short one: a grid of one wave is timed right too. */
    CASE(PEAK, "dtype", "fp32", "iters", "256", "waves", "1");
    finish("peak");
}

/* Microseconds per op between 0.05 (faster than any GPU runs a kernel) and
 * 2000 (a VM's blocking sync is tens of us; milliseconds mean a timer or
 * count error), and a kernel inside a CUDA Graph cheaper than a launch plus
 * synchronisation (the reason graphs exist; ~1 us against 5-20 us). */
static void test_launch(void **s)
{
    (void)s;
    const char *ops[] = { "launch", "launch_sync", "graph", "stream_sync", "d2h_4b" };
    double us[5] = { 0 };
    for (int i = 0; i < 5; i++) {
        result r = CASE(LAUNCH, "op", ops[i], "count", "50");
        if (!r.ok)
            continue;
        us[i] = 1.0 / r.rate; /* Mop/s -> us per op */
        if (!(us[i] > 0.05 && us[i] < 2000))
            failed("launch %s: %.3f us per op", ops[i], us[i]);
        bool one_at_a_time = i == 1 || i == 3 || i == 4;
        if (one_at_a_time && !(r.p50_us > 0))
            failed("launch %s: no latency_p50_us", ops[i]);
    }
    if (us[1] > 0 && us[2] > 0 && us[2] >= us[1])
        failed("a graph kernel (%.2f us) costs as much as launch + sync (%.2f us)", us[2], us[1]);
    finish("launch");
}

static void test_context(void **s)
{
    (void)s;
    cJSON *ctx = cJSON_CreateObject();
    mb_gpu_context_add(ctx);
    cJSON *gpus = cJSON_GetObjectItemCaseSensitive(ctx, "gpus");
    assert_true(cJSON_GetArraySize(gpus) >= 1);
    cJSON *g = cJSON_GetArrayItem(gpus, 0);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "name")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "uuid")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(g, "sms")));
    assert_true(cJSON_GetObjectItemCaseSensitive(g, "sms")->valuedouble > 0);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "compute_capability")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "pci_bus_id")));
    cJSON *bw = cJSON_GetObjectItemCaseSensitive(g, "memory_bandwidth_gbps_theoretical");
    assert_true(cJSON_IsNumber(bw) && bw->valuedouble > 0);
    char *text = cJSON_Print(ctx);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(ctx);
}

int main(void)
{
    mb_err why = { 0 };
    if (COPY.probe(NULL, &why) != MB_OK) {
        printf("skipped: %s\n", why.msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context), cmocka_unit_test(test_copy),   cmocka_unit_test(test_copy_skips),
        cmocka_unit_test(test_membw),   cmocka_unit_test(test_peak),   cmocka_unit_test(test_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
