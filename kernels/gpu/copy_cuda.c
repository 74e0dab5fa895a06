/* copy_cuda.c: host<->device and device<->device copies (component `copy`,
 * backend `cuda`), nvbandwidth's method.
 *
 * One run() = one timed region of `copies` cudaMemcpyAsync calls of `size`
 * bytes on the benchmark stream, between two CUDA events. For pinned and
 * write-combined host memory and for d2d a spin kernel holds the stream while
 * the host enqueues (gpu_gate.h), so the events see the copies back to back
 * and none of the host's enqueue cost. Pageable memory cannot be gated: the
 * driver stages it through its own pinned buffer from the calling thread
 * (d2h returns only when done), so a held stream would deadlock it; its
 * timed region therefore includes that staging, which is the real cost of a
 * pageable copy.
 *
 * bidir: h2d on one stream, d2h on another, both released at once; each
 * direction's GB/s is reported on its own (metrics h2d_gbps, d2h_gbps) and
 * the rate counts both payloads over the time until both finished.
 *
 * Bytes: h2d/d2h/bidir count payload; d2d counts each byte read and written
 * (2 x size), so its rate compares with the DRAM bandwidth (gpu_check.h).
 *
 * Verification: sources hold a random byte stream (gpu_check.h), the
 * destinations start as a different one; before every run, outside its
 * timed region, the destination is marked stale again (a device destination
 * rewritten with the stale stream, a host one with one byte flipped per
 * 4 KiB page), so after the runs the destination, compared byte for byte
 * with the source stream (device buffers copied back outside any timed
 * region), shows the last run's copies landed, not the warm-up's. */
#include "component.h"

#ifdef MB_HAVE_CUDA
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "gpu_check.h"
#include "gpu_gate.h"
#include "gpu_kernels.h"
#include "gpu_util.h"
#include "hardware.h"
#include "numa_bind.h"
#include "pcie.h"

#define SEED_HOST 0x6d6c62656e636801ull   /* source in host memory (h2d) */
#define SEED_DEV 0x6d6c62656e636802ull    /* source in device memory (d2h, d2d) */
#define SEED_STALE 0x6d6c62656e636803ull  /* what destinations hold before any copy */
#define MAX_SAMPLES 65536
#define SMALL_COPY (1u << 20)             /* below this, read latency_us, not GB/s */

enum { MEM_PAGEABLE, MEM_PINNED, MEM_WC };

typedef struct copy_state {
    mb_copy_dir dir;
    int memory;
    size_t size;
    long copies;
    cudaStream_t stream[2];   /* [0] benchmark stream, [1] the d2h half of bidir */
    mb_cuda_timer timer;      /* start and overall stop on stream[0] */
    cudaEvent_t done[2];      /* end of each direction's copies (bidir) */
    mb_cuda_gate gate;
    bool gated;
    /* h2d: host_src -> dev_dst; d2h: dev_src -> host_dst; bidir: both pairs;
     * d2d: dev_src -> dev_dst. */
    void *host_src, *host_dst, *dev_src, *dev_dst;
    mb_numa_binding *numa;
    int gpu_node;             /* NUMA node sysfs gives the GPU (-1 unknown) */
    int host_node;            /* where the pinned pages landed (-1 unknown, -2 mixed) */
    char numa_note[256];
    mb_pcie_link link;
    bool have_link;
    char link_why[200];       /* why the link is unknown (VM, container) */
    long runs;                /* all runs, warm-up included */
    long timed_runs;          /* since timing_start: what the samples hold */
    int nsamples;
    double *seconds;          /* per run: whole region */
    double *dir_seconds[2];   /* per run, bidir: h2d and d2h regions */
} copy_state;

static int copy_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    return mb_cuda_probe(why);
}

static const char *dir_name(mb_copy_dir d)
{
    static const char *names[] = { "h2d", "d2h", "bidir", "d2d" };
    return names[d];
}

static bool needs_host_src(mb_copy_dir d) { return d == MB_COPY_H2D || d == MB_COPY_BIDIR; }
static bool needs_host_dst(mb_copy_dir d) { return d == MB_COPY_D2H || d == MB_COPY_BIDIR; }
static bool needs_dev_src(mb_copy_dir d) { return d != MB_COPY_H2D; }
static bool needs_dev_dst(mb_copy_dir d) { return d != MB_COPY_D2H; }

static void free_host(copy_state *s, void *p)
{
    if (p == NULL)
        return;
    if (s->memory == MEM_PAGEABLE)
        free(p);
    else
        cudaFreeHost(p);
}

static void copy_teardown(void *state)
{
    copy_state *s = state;
    if (s == NULL)
        return;
    mb_cuda_gate_destroy(&s->gate); /* opens a held stream first */
    if (s->stream[0])
        cudaStreamSynchronize(s->stream[0]);
    if (s->stream[1])
        cudaStreamSynchronize(s->stream[1]);
    free_host(s, s->host_src);
    free_host(s, s->host_dst);
    cudaFree(s->dev_src);
    cudaFree(s->dev_dst);
    for (int i = 0; i < 2; i++) {
        if (s->done[i])
            cudaEventDestroy(s->done[i]);
        if (s->stream[i])
            cudaStreamDestroy(s->stream[i]);
        free(s->dir_seconds[i]);
    }
    mb_cuda_timer_destroy(&s->timer);
    mb_numa_unbind(s->numa);
    free(s->seconds);
    /* Clear an error a failed case left, so the next case starts clean. */
    cudaGetLastError();
    free(s);
}

static int alloc_host(copy_state *s, void **p, mb_err *err)
{
    if (s->memory == MEM_PAGEABLE) {
        /* Page-aligned like the allocator of any framework's tensors. */
        if (posix_memalign(p, 4096, s->size) != 0) {
            *p = NULL;
            return mb_errf(err, MB_ESKIP, "cannot allocate %zu bytes of pageable host memory", s->size);
        }
        return MB_OK;
    }
    unsigned flags = s->memory == MEM_WC ? cudaHostAllocWriteCombined : cudaHostAllocDefault;
    return mb_cuda_err(cudaHostAlloc(p, s->size, flags), err,
                       s->memory == MEM_WC ? "cudaHostAlloc(write-combined)" : "cudaHostAlloc");
}

/* Binds the thread (and so the pages cudaHostAlloc pins for it) to the GPU's
 * NUMA node. Failing to bind is not an error: it is recorded and said. */
static void bind_numa(copy_state *s, bool want)
{
    s->gpu_node = s->have_link ? s->link.numa_node : -1;
    s->host_node = -1;
    if (!want) {
        snprintf(s->numa_note, sizeof s->numa_note, "NUMA binding off (numa=false)");
        return;
    }
    /* Unknown node: said once per GPU in the machine context
     * (context.gpus[].numa_note, mb_pcie_context_add), not on every row. */
    if (s->gpu_node < 0)
        return;
    mb_err why = { 0 };
    if (mb_numa_bind(s->gpu_node, &s->numa, &why) != MB_OK)
        snprintf(s->numa_note, sizeof s->numa_note, "not bound to NUMA node %d: %.200s", s->gpu_node, why.msg);
}

static int copy_setup(const mb_params *p, void **state, mb_err *err)
{
    copy_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = s;
    const char *dir = mb_param_str(p, "direction"), *mem = mb_param_str(p, "memory");
    s->dir = strcmp(dir, "h2d") == 0 ? MB_COPY_H2D : strcmp(dir, "d2h") == 0 ? MB_COPY_D2H
             : strcmp(dir, "bidir") == 0 ? MB_COPY_BIDIR : MB_COPY_D2D;
    s->memory = strcmp(mem, "pageable") == 0 ? MEM_PAGEABLE : strcmp(mem, "wc") == 0 ? MEM_WC : MEM_PINNED;
    s->size = (size_t)mb_param_int(p, "size");
    s->copies = mb_param_int(p, "copies");
    if (s->copies == 0) {
        long n = (long)((256ull << 20) / s->size);
        s->copies = n < 4 ? 4 : n > 100 ? 100 : n;
    }
    if (s->dir == MB_COPY_D2D && s->memory != MEM_PINNED)
        return mb_errf(err, MB_ESKIP, "d2d uses no host memory: it runs once, with memory=pinned (the default)");
    if (s->memory == MEM_PAGEABLE && s->dir == MB_COPY_BIDIR)
        return mb_errf(err, MB_ESKIP,
                       "bidir needs pinned memory: a pageable d2h returns only when done and a pageable h2d is "
                       "staged by the calling thread, so the two directions would take turns, not overlap");
    if (s->memory == MEM_WC && s->dir != MB_COPY_H2D)
        return mb_errf(err, MB_ESKIP,
                       "memory=wc is write-combined host memory, for data the host writes and the GPU reads: "
                       "h2d only (host reads of it are uncached)");
    size_t dev_bytes = (needs_dev_src(s->dir) + needs_dev_dst(s->dir)) * s->size;
    int rc = mb_cuda_fits(dev_bytes, err);
    if (rc != MB_OK)
        return rc;

    mb_err lerr = { 0 };
    s->have_link = mb_cuda_pcie_link(&s->link, &lerr) == MB_OK;
    if (!s->have_link)
        snprintf(s->link_why, sizeof s->link_why, "%.199s", lerr.msg);
    if (s->dir != MB_COPY_D2D)
        bind_numa(s, mb_param_bool(p, "numa"));

    if (needs_host_src(s->dir) && (rc = alloc_host(s, &s->host_src, err)) != MB_OK)
        goto fail;
    if (needs_host_dst(s->dir) && (rc = alloc_host(s, &s->host_dst, err)) != MB_OK)
        goto fail;
    /* Writing the buffers here also places pageable pages (first touch). */
    if (s->host_src)
        mb_pattern_fill(s->host_src, s->size, SEED_HOST);
    if (s->host_dst)
        mb_pattern_fill(s->host_dst, s->size, SEED_STALE);
    if (s->numa) {
        mb_numa_restore_memory_policy(s->numa); /* the thread stays on the node's CPUs */
        void *probe_buf = s->host_src ? s->host_src : s->host_dst;
        s->host_node = mb_numa_node_of(s->numa, probe_buf, s->size);
    }

    MB_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream[0], cudaStreamNonBlocking), err, cuda_fail);
    if (s->dir == MB_COPY_BIDIR) {
        MB_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream[1], cudaStreamNonBlocking), err, cuda_fail);
        MB_CUDA_TRY(cudaEventCreate(&s->done[0]), err, cuda_fail);
        MB_CUDA_TRY(cudaEventCreate(&s->done[1]), err, cuda_fail);
    }
    if (needs_dev_src(s->dir)) {
        MB_CUDA_TRY(cudaMalloc(&s->dev_src, s->size), err, cuda_fail);
        MB_CUDA_TRY(mb_gpu_pattern_fill(s->dev_src, s->size, SEED_DEV, s->stream[0]), err, cuda_fail);
    }
    if (needs_dev_dst(s->dir)) {
        MB_CUDA_TRY(cudaMalloc(&s->dev_dst, s->size), err, cuda_fail);
        MB_CUDA_TRY(mb_gpu_pattern_fill(s->dev_dst, s->size, SEED_STALE, s->stream[0]), err, cuda_fail);
    }
    MB_CUDA_TRY(cudaStreamSynchronize(s->stream[0]), err, cuda_fail);
    if ((rc = mb_cuda_timer_init(&s->timer, s->stream[0], err)) != MB_OK)
        goto fail;
    s->gated = s->memory != MEM_PAGEABLE;
    if (s->gated && (rc = mb_cuda_gate_init(&s->gate, err)) != MB_OK)
        goto fail;
    s->seconds = calloc(MAX_SAMPLES, sizeof *s->seconds);
    s->dir_seconds[0] = calloc(MAX_SAMPLES, sizeof(double));
    s->dir_seconds[1] = calloc(MAX_SAMPLES, sizeof(double));
    if (!s->seconds || !s->dir_seconds[0] || !s->dir_seconds[1])
        return mb_errf(err, MB_ESYS, "out of memory");
    return MB_OK;
cuda_fail:
    rc = err->code;
fail:
    return rc; /* the harness calls teardown */
}

/* The copies of one direction (an index into the buffers of the case). */
static cudaError_t enqueue_copy(copy_state *s, mb_copy_dir d, cudaStream_t st)
{
    switch (d) {
    case MB_COPY_H2D:
        return cudaMemcpyAsync(s->dev_dst, s->host_src, s->size, cudaMemcpyHostToDevice, st);
    case MB_COPY_D2H:
        return cudaMemcpyAsync(s->host_dst, s->dev_src, s->size, cudaMemcpyDeviceToHost, st);
    default:
        return cudaMemcpyAsync(s->dev_dst, s->dev_src, s->size, cudaMemcpyDeviceToDevice, st);
    }
}

static int enqueue_region(copy_state *s, mb_err *err)
{
    int rc = mb_cuda_timer_start(&s->timer, err);
    if (rc != MB_OK)
        return rc;
    if (s->dir != MB_COPY_BIDIR) {
        for (long k = 0; k < s->copies && rc == MB_OK; k++)
            rc = mb_cuda_err(enqueue_copy(s, s->dir, s->stream[0]), err, "cudaMemcpyAsync");
        return rc == MB_OK ? mb_cuda_timer_record_stop(&s->timer, err) : rc;
    }
    /* Both directions start at the start event (stream[1] waits on it) and
     * are enqueued alternately; the overall stop waits for both. */
    rc = mb_cuda_err(cudaStreamWaitEvent(s->stream[1], s->timer.start, 0), err, "cudaStreamWaitEvent");
    for (long k = 0; k < s->copies && rc == MB_OK; k++) {
        rc = mb_cuda_err(enqueue_copy(s, MB_COPY_H2D, s->stream[0]), err, "cudaMemcpyAsync(h2d)");
        if (rc == MB_OK)
            rc = mb_cuda_err(enqueue_copy(s, MB_COPY_D2H, s->stream[1]), err, "cudaMemcpyAsync(d2h)");
    }
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaEventRecord(s->done[0], s->stream[0]), err, "cudaEventRecord");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaEventRecord(s->done[1], s->stream[1]), err, "cudaEventRecord");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaStreamWaitEvent(s->stream[0], s->done[1], 0), err, "cudaStreamWaitEvent");
    return rc == MB_OK ? mb_cuda_timer_record_stop(&s->timer, err) : rc;
}

/* Makes the destination stale again, outside the timed region, so that the
 * check after the runs sees the last run's copies. Device: the stale stream,
 * rewritten by a kernel enqueued ahead of the spin (the start event follows
 * the spin). Host: one byte flipped per 4 KiB page (cheap at 1 GiB; a page
 * the last run did not write then fails the check). */
static int mark_stale(copy_state *s, mb_err *err)
{
    if (s->dev_dst) {
        int rc = mb_cuda_err(mb_gpu_pattern_fill(s->dev_dst, s->size, SEED_STALE, s->stream[0]), err,
                             "stale fill of the destination");
        /* Ungated (pageable) runs start timing at once: let the fill finish
         * first, or the host's staging would overlap it untimed. */
        if (rc == MB_OK && !s->gated)
            rc = mb_cuda_err(cudaStreamSynchronize(s->stream[0]), err, "cudaStreamSynchronize");
        if (rc != MB_OK)
            return rc;
    }
    if (s->host_dst) {
        unsigned char *p = s->host_dst;
        for (size_t off = 0; off < s->size; off += 4096)
            p[off] ^= 0xFF;
        if ((s->size - 1) % 4096 != 0) /* the tail, unless the loop flipped it already */
            p[s->size - 1] ^= 0xFF;
    }
    return MB_OK;
}

static int copy_run(void *state, double *seconds, mb_err *err)
{
    copy_state *s = state;
    int rc = mark_stale(s, err);
    if (rc != MB_OK)
        return rc;
    if (s->gated)
        rc = mb_cuda_gate_close(&s->gate, s->stream[0], err);
    if (rc == MB_OK)
        rc = enqueue_region(s, err);
    if (s->gated)
        mb_cuda_gate_open(&s->gate); /* also after an error: never leave the stream held */
    if (rc == MB_OK)
        rc = mb_cuda_timer_elapsed(&s->timer, seconds, err);
    if (rc != MB_OK) {
        cudaStreamSynchronize(s->stream[0]);
        return rc;
    }
    if (s->gated)
        mb_cuda_gate_timed_out(&s->gate);
    int i = (int)(s->timed_runs % MAX_SAMPLES); /* a ring: the newest run replaces the oldest */
    if (s->nsamples < MAX_SAMPLES)
        s->nsamples++;
    s->timed_runs++;
    s->seconds[i] = *seconds;
    if (s->dir == MB_COPY_BIDIR) {
        for (int d = 0; d < 2 && rc == MB_OK; d++) {
            float ms = 0;
            rc = mb_cuda_err(cudaEventElapsedTime(&ms, s->timer.start, s->done[d]), err,
                             "cudaEventElapsedTime");
            s->dir_seconds[d][i] = ms / 1e3;
        }
    }
    s->runs++;
    return rc;
}

/* The warm-up's samples (first touches, clock ramp-up, lazy driver set-up)
 * and its spin timeouts stay out of the metrics. */
static void copy_timing_start(void *state)
{
    copy_state *s = state;
    s->nsamples = 0;
    s->timed_runs = 0;
    s->gate.timeouts = 0;
}

static double copy_work(void *state)
{
    copy_state *s = state;
    return mb_copy_bytes(s->dir, s->size, s->copies);
}

/* Copies a device buffer back (outside any timed region) and checks it. */
static int check_device(copy_state *s, const void *dev, uint64_t seed, const char *what, mb_err *err)
{
    unsigned char *host = malloc(s->size);
    if (host == NULL)
        return mb_errf(err, MB_ESYS, "out of memory for the %zu-byte check buffer", s->size);
    int rc = mb_cuda_err(cudaMemcpy(host, dev, s->size, cudaMemcpyDeviceToHost), err,
                         "cudaMemcpy(check copy-back)");
    size_t first = 0, bad = rc == MB_OK ? mb_pattern_check(host, s->size, seed, &first) : 0;
    free(host);
    if (rc == MB_OK && bad)
        rc = mb_errf(err, MB_EVERIFY, "%s: %zu of %zu bytes differ from the source, first at offset %zu", what,
                     bad, s->size, first);
    return rc;
}

static int check_host(copy_state *s, const void *host, uint64_t seed, const char *what, mb_err *err)
{
    size_t first = 0, bad = mb_pattern_check(host, s->size, seed, &first);
    if (bad)
        return mb_errf(err, MB_EVERIFY, "%s: %zu of %zu bytes differ from the source, first at offset %zu", what,
                       bad, s->size, first);
    return MB_OK;
}

static int copy_verify(void *state, mb_err *err)
{
    copy_state *s = state;
    if (s->runs == 0)
        return mb_errf(err, MB_ESKIP, "no copy ran");
    int rc = mb_cuda_err(cudaDeviceSynchronize(), err, "cudaDeviceSynchronize");
    if (rc == MB_OK && s->dir == MB_COPY_H2D)
        rc = check_device(s, s->dev_dst, SEED_HOST, "h2d", err);
    if (rc == MB_OK && s->dir == MB_COPY_D2H)
        rc = check_host(s, s->host_dst, SEED_DEV, "d2h", err);
    if (rc == MB_OK && s->dir == MB_COPY_D2D)
        rc = check_device(s, s->dev_dst, SEED_DEV, "d2d", err);
    if (rc == MB_OK && s->dir == MB_COPY_BIDIR) {
        rc = check_device(s, s->dev_dst, SEED_HOST, "bidir h2d", err);
        if (rc == MB_OK)
            rc = check_host(s, s->host_dst, SEED_DEV, "bidir d2h", err);
    }
    return rc;
}

/* The median one-direction GB/s of the timed runs (bidir: the faster
 * direction), 0 when there are none. */
static double measured_dir_gbps(const copy_state *s)
{
    int n = s->nsamples;
    if (n == 0)
        return 0;
    double bytes = (double)s->size * (double)s->copies;
    if (s->dir != MB_COPY_BIDIR)
        return bytes / mb_median(s->seconds, n) / 1e9;
    double h2d = bytes / mb_median(s->dir_seconds[0], n) / 1e9, d2h = bytes / mb_median(s->dir_seconds[1], n) / 1e9;
    return h2d > d2h ? h2d : d2h;
}

/* The theoretical rate: the PCIe link from sysfs (mb_pcie_pick_peak: the
 * current link unless the copies went faster than it, then the maximum),
 * else the datasheet's interconnect; d2d: the DRAM bandwidth. */
static void report_peak(copy_state *s, mb_report *r, const struct cudaDeviceProp *prop)
{
    char src[256], desc[64], desc2[64];
    if (s->dir == MB_COPY_D2D) {
        double gbps = mb_cuda_mem_peak_gbps(src, sizeof src);
        if (gbps > 0) {
            char full[400];
            snprintf(full, sizeof full, "DRAM bandwidth, %s (rate counts read + write)", src);
            mb_report_peak(r, gbps, full);
        }
        if (prop && prop->l2CacheSize > 0 && 2 * s->size <= (size_t)prop->l2CacheSize)
            mb_report_note(r, "source and destination (%zu bytes each) fit in the %d-byte L2: the copies may run "
                              "from L2, above the DRAM bandwidth",
                           s->size, prop->l2CacheSize);
        return;
    }
    double mult = s->dir == MB_COPY_BIDIR ? 2.0 : 1.0;
    /* Re-read the link right after the runs: GPUs train the link down when
     * idle, so setup may have seen a lower current speed. */
    mb_pcie_link now;
    if (s->have_link && mb_cuda_pcie_link(&now, NULL) == MB_OK)
        s->link = now;
    double measured = measured_dir_gbps(s);
    int gen = 0, width = 0;
    mb_pcie_peak pick = s->have_link ? mb_pcie_pick_peak(&s->link, measured, &gen, &width) : MB_PCIE_PEAK_NONE;
    const char *which = "current link";
    if (pick == MB_PCIE_PEAK_CURRENT && mb_pcie_link_gbps(&s->link, 1) < mb_pcie_link_gbps(&s->link, 0))
        mb_report_note(r, "PCIe link ran at %s, below the device's maximum %s (slot, riser, BIOS or power "
                          "state): the peak is the current link",
                       mb_pcie_describe(gen, width, desc, sizeof desc),
                       mb_pcie_describe(s->link.max_gen, s->link.max_width, desc2, sizeof desc2));
    if (pick == MB_PCIE_PEAK_MAX && s->link.cur_gen && s->link.cur_width) {
        which = "maximum link";
        mb_report_note(r, "sysfs read the current link as %s, slower than the %.2f GB/s the copies reached: it was "
                          "read while the link idled down; the peak is the maximum link",
                       mb_pcie_describe(s->link.cur_gen, s->link.cur_width, desc, sizeof desc), measured);
    } else if (pick == MB_PCIE_PEAK_MAX) {
        which = "maximum link (current unknown)";
    }
    bool link_known = s->have_link && (mb_pcie_link_gbps(&s->link, 0) > 0 || mb_pcie_link_gbps(&s->link, 1) > 0);
    if (pick == MB_PCIE_PEAK_NONE && link_known)
        mb_report_note(r, "sysfs gives the link as current %s, max %s, both slower than the %.2f GB/s the copies "
                          "reached (an emulated link in a VM?): not used as the peak",
                       mb_pcie_describe(s->link.cur_gen, s->link.cur_width, desc, sizeof desc),
                       mb_pcie_describe(s->link.max_gen, s->link.max_width, desc2, sizeof desc2), measured);
    if (pick != MB_PCIE_PEAK_NONE) {
        snprintf(src, sizeof src, "%s, %s from sysfs, %s encoding, per direction%s",
                 mb_pcie_describe(gen, width, desc, sizeof desc), which, mb_pcie_encoding(gen),
                 mult > 1 ? " x 2 directions" : "");
        mb_report_peak(r, mult * mb_pcie_gbps(gen, width), src);
        return;
    }
    mb_datasheet *d = NULL;
    double dg = 0, dw = 0;
    const char *dsrc = NULL;
    if (prop && mb_datasheet_match(prop->name, &d, NULL) == MB_OK &&
        mb_datasheet_get(d, "interconnect.pcie_gen", &dg, &dsrc) &&
        mb_datasheet_get(d, "interconnect.pcie_width", &dw, NULL) && mb_pcie_gbps((int)dg, (int)dw) > 0) {
        snprintf(src, sizeof src, "%s, datasheet %s (%s), %s encoding%s",
                 mb_pcie_describe((int)dg, (int)dw, desc, sizeof desc), mb_datasheet_name(d), dsrc ? dsrc : "",
                 mb_pcie_encoding((int)dg), mult > 1 ? " x 2 directions" : "");
        mb_report_peak(r, mult * mb_pcie_gbps((int)dg, (int)dw), src);
    } else {
        mb_report_note(r, "no theoretical rate: the PCIe link is not in sysfs and no datasheet names it");
    }
    if (d)
        mb_datasheet_free(d);
}

static void copy_report(void *state, mb_report *r)
{
    copy_state *s = state;
    const struct cudaDeviceProp *prop = mb_cuda_props();
    char buf[256];
    if (prop)
        mb_report_info(r, "gpu", prop->name);
    mb_report_info(r, "direction", dir_name(s->dir));
    mb_report_info(r, "host_memory", s->dir == MB_COPY_D2D ? "none"
                                      : s->memory == MEM_PAGEABLE ? "pageable (malloc)"
                                      : s->memory == MEM_WC ? "pinned write-combined (cudaHostAllocWriteCombined)"
                                                            : "pinned (cudaHostAlloc)");
    mb_report_info(r, "bytes_counted", s->dir == MB_COPY_D2D ? "read + write: 2 x size per copy"
                                       : s->dir == MB_COPY_BIDIR ? "payload of both directions"
                                                                  : "payload: size per copy");
    snprintf(buf, sizeof buf, "%ld copies of %zu bytes per timed region, %s", s->copies, s->size,
             s->gated ? "enqueued behind a spin kernel (enqueue cost not timed)"
                      : "pageable: timed as the driver stages it (host-synchronous)");
    mb_report_info(r, "method", buf);
    if (!s->have_link && s->dir != MB_COPY_D2D && s->link_why[0])
        mb_report_note(r, "PCIe link unknown: %s", s->link_why);
    if (s->have_link) {
        mb_report_info(r, "pci_bus_id", s->link.busid);
        char a[32], b[32];
        snprintf(buf, sizeof buf, "current %s, max %s", mb_pcie_describe(s->link.cur_gen, s->link.cur_width, a, sizeof a),
                 mb_pcie_describe(s->link.max_gen, s->link.max_width, b, sizeof b));
        mb_report_info(r, "pcie_link", buf);
    }
    if (s->dir != MB_COPY_D2D) {
        snprintf(buf, sizeof buf, "%d", s->gpu_node);
        mb_report_info(r, "gpu_numa_node", s->gpu_node >= 0 ? buf : "unknown (see context.gpus[].numa_note)");
        if (s->numa) {
            snprintf(buf, sizeof buf, "%d", s->host_node);
            mb_report_info(r, "host_buffer_numa_node", s->host_node >= 0 ? buf
                                                       : s->host_node == -2 ? "several" : "unknown");
            if (s->host_node >= 0 && s->host_node != s->gpu_node)
                mb_report_note(r, "host buffers landed on NUMA node %d, not the GPU's node %d (node full?)",
                               s->host_node, s->gpu_node);
            mb_report_info(r, "thread_binding", "bound to the GPU's NUMA node (hwloc)");
        } else if (s->numa_note[0]) {
            mb_report_note(r, "%s", s->numa_note);
        }
    }
    int n = s->nsamples;
    if (n > 0) {
        double per_copy = mb_median(s->seconds, n) / (double)s->copies;
        if (s->dir != MB_COPY_BIDIR) {
            mb_report_metric(r, "latency_us", per_copy * 1e6, "us");
            mb_report_metric(r, "latency_min_us", mb_min(s->seconds, n) / (double)s->copies * 1e6, "us");
        }
        if (s->dir == MB_COPY_D2D)
            mb_report_metric(r, "payload_gbps", (double)s->size / per_copy / 1e9, "GB/s");
        if (s->dir == MB_COPY_BIDIR) {
            double bytes = (double)s->size * (double)s->copies;
            mb_report_metric(r, "h2d_gbps", bytes / mb_median(s->dir_seconds[0], n) / 1e9, "GB/s");
            mb_report_metric(r, "d2h_gbps", bytes / mb_median(s->dir_seconds[1], n) / 1e9, "GB/s");
        }
    }
    if (s->size < SMALL_COPY && s->dir != MB_COPY_BIDIR)
        mb_report_note(r, "small copy: latency_us (device time per copy, back to back) is the figure to read; "
                          "GB/s is dominated by the per-copy cost");
    if (s->memory == MEM_PAGEABLE && s->dir != MB_COPY_D2D)
        mb_report_note(r, "pageable memory: the driver copies through a pinned staging buffer on this thread; "
                          "includes that host memcpy");
    if (s->gate.timeouts)
        mb_report_note(r, "the spin kernel timed out in %u of %ld timed runs: enqueue time may be inside those "
                          "timings",
                       s->gate.timeouts, s->timed_runs);
    report_peak(s, r, prop);
}

const mb_backend_code mb_copy_cuda = {
    .component = "copy",
    .backend = "cuda",
    .probe = copy_probe,
    .setup = copy_setup,
    .run = copy_run,
    .work_per_iter = copy_work,
    .verify = copy_verify,
    .report = copy_report,
    .timing_start = copy_timing_start,
    .teardown = copy_teardown,
};

#else /* !MB_HAVE_CUDA */

MB_NOT_BUILT_IN(mb_copy_cuda, "copy", "cuda", "CUDA toolkit not found at build time");

#endif
