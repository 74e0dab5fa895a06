/* project.c: the kernel-level projection model (project.h): datasheet
 * figures, waves, the roofline exponent, one kernel's projected time, and
 * the step re-laid on the target's timeline. */
#include "project.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the GPU from its datasheet ------------------------------------------- */

/* PCIe payload bandwidth per lane and direction, GB/s, by generation
 * (PCI-SIG: 8, 16, 32, 64 GT/s; 128b/130b encoding from gen 3, FLIT at gen 6). */
static double pcie_lane_gbps(double gen)
{
    static const double lane[] = { 0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 };
    int g = (int)gen;
    return g >= 1 && g <= 6 ? lane[g] : 0;
}

static double sheet(const mb_datasheet *d, const char *key)
{
    double v = 0;
    return mb_datasheet_get(d, key, &v, NULL) && v > 0 ? v : 0;
}

int mb_proj_gpu_from_datasheet(const mb_datasheet *d, mb_proj_gpu *g, mb_err *err)
{
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", mb_datasheet_name(d));
    g->sms = sheet(d, "gpu.sms");
    g->clock_mhz = sheet(d, "gpu.boost_clock_mhz");
    g->fp32_clock_mhz = sheet(d, "gpu.fp32_sustained_clock_mhz");
    if (g->fp32_clock_mhz > 0 && !(g->clock_mhz > 0 && g->fp32_clock_mhz <= g->clock_mhz))
        return mb_errf(err, MB_EUSAGE, "%s: [gpu] fp32_sustained_clock_mhz %g needs a boost_clock_mhz at or above it%s",
                       mb_datasheet_file(d), g->fp32_clock_mhz,
                       g->clock_mhz > 0 ? " (the FP32 peak is printed at the boost clock)" : " (none given)");
    g->sustained = mb_proj_sustained(g->fp32_clock_mhz, g->clock_mhz);
    g->max_threads_per_sm = sheet(d, "gpu.max_threads_per_sm");
    g->bw = sheet(d, "memory.bandwidth_gbps") * 1e9;
    static const struct {
        int math;
        const char *key, *alt;
    } peaks[] = {
        { MB_PM_FP32, "peak.fp32", NULL },  { MB_PM_TF32, "peak.tf32", NULL }, { MB_PM_FP16, "peak.fp16", NULL },
        { MB_PM_BF16, "peak.bf16", NULL },  { MB_PM_FP8, "peak.fp8", NULL },   { MB_PM_INT8, "peak.int8", NULL },
        { MB_PM_FP64, "peak.fp64_tensor", "peak.fp64" },
    };
    for (size_t i = 0; i < sizeof peaks / sizeof *peaks; i++) {
        double v = sheet(d, peaks[i].key);
        if (v == 0 && peaks[i].alt)
            v = sheet(d, peaks[i].alt);
        g->flops[peaks[i].math] = v * 1e12 * (peaks[i].math == MB_PM_FP32 ? g->sustained : 1);
    }
    g->pcie_bw = pcie_lane_gbps(sheet(d, "interconnect.pcie_gen")) * sheet(d, "interconnect.pcie_width") * 1e9;
    g->nvlink_bw = sheet(d, "interconnect.nvlink_gbps") * 1e9;
    /* A card without NVLink (the datasheet says 0: T4, L4, L40S, RTX 4090, a PCIe V100) reaches the other
     * GPUs over PCIe; kept as NVLink's, it projected a 2-A100 all-to-all unchanged there while a V100 SXM2
     * (NVLink, 300 GB/s) took twice the time. A datasheet without the key: unknown. */
    double said = -1;
    if (g->nvlink_bw > 0)
        g->link_bw = g->nvlink_bw / 2;
    else if (mb_datasheet_get(d, "interconnect.nvlink_gbps", &said, NULL) && said == 0)
        g->link_bw = g->pcie_bw;
    if (g->sms == 0 || g->bw == 0 || g->flops[MB_PM_FP32] == 0) {
        /* the ones it lacks (an A10G's datasheet was told all three for want of its SM count) */
        const struct {
            bool lacks;
            const char *key;
        } need[] = {{g->sms == 0, "[gpu] sms"}, {g->bw == 0, "[memory] bandwidth_gbps"},
                    {g->flops[MB_PM_FP32] == 0, "[peak] fp32"}};
        char list[96] = "";
        int left = 0;
        for (int i = 0; i < 3; i++)
            left += need[i].lacks;
        for (int i = 0; i < 3; i++)
            if (need[i].lacks) {
                left--;
                size_t at = strlen(list);
                snprintf(list + at, sizeof list - at, "%s%s", need[i].key, left > 1 ? ", " : left ? " and " : "");
            }
        return mb_errf(err, MB_EUSAGE, "%s: the kernel-level projection needs %s, which it lacks",
                       mb_datasheet_file(d), list);
    }
    return MB_OK;
}

/* ---- the model's parts ------------------------------------------------------- */

double mb_proj_sustained(double sustained_mhz, double boost_mhz)
{
    if (sustained_mhz <= 0 || boost_mhz <= 0 || sustained_mhz >= boost_mhz)
        return 1;
    return sustained_mhz / boost_mhz;
}

double mb_proj_waves(double blocks, double resident, double sms)
{
    double per_wave = (resident > 0 ? resident : 1) * (sms > 0 ? sms : 1);
    double w = ceil(blocks / per_wave);
    return w >= 1 ? w : 1;
}

double mb_proj_resident(double threads, double max_threads_per_sm)
{
    if (threads <= 0 || max_threads_per_sm <= 0)
        return 1;
    double r = floor(max_threads_per_sm / threads);
    return r < 1 ? 1 : r > 32 ? 32 : r;
}

double mb_proj_gamma(double flops, double bytes, double ridge)
{
    if (flops <= 0)
        return 1;
    if (bytes <= 0 || ridge <= 0)
        return 0;
    double intensity = flops / bytes;
    return intensity <= ridge ? 1 - 0.5 * intensity / ridge : 0.5 * ridge / intensity;
}

double mb_proj_sdpa_flops(double b, double h, double l, double s, double d, bool backward, bool causal)
{
    double f = (backward ? 10 : 4) * b * h * l * s * d;
    return causal ? f / 2 : f;
}

/* The peak of `math` on g, falling back to the CUDA cores' fp32. */
static double peak_of(const mb_proj_gpu *g, int math)
{
    double f = math >= 0 && math < MB_PM_N ? g->flops[math] : 0;
    return f > 0 ? f : g->flops[MB_PM_FP32];
}

mb_proj_result mb_proj_kernel_time(const mb_proj_kernel *k, const mb_proj_gpu *here, const mb_proj_gpu *there)
{
    mb_proj_result r = { .seconds = k->seconds, .gamma = 1, .bound = MB_PB_KEPT, .waves_here = 1, .waves_there = 1 };
    double overhead = fmin(fmax(k->overhead, 0), k->seconds), work = k->seconds - overhead;
    if (work <= MB_PROJ_LATENCY_S) {
        r.bound = MB_PB_LATENCY;
        return r;
    }
    double f_here = peak_of(here, k->math), f_there = peak_of(there, k->math);
    if (k->math > MB_PM_FP32 && k->math < MB_PM_N && here->flops[k->math] > 0 && there->flops[k->math] == 0 &&
        (k->tensor || k->flops > 0)) {
        r.no_peak = true; /* scaling tensor-core math by a CUDA-core figure would be wrong */
        return r;
    }
    if (f_here <= 0 || f_there <= 0 || here->bw <= 0 || there->bw <= 0 || here->sms <= 0 || there->sms <= 0)
        return r;
    if (k->flops > 0 || k->bytes > 0)
        r.gamma = mb_proj_gamma(k->flops, k->bytes, f_there / there->bw);
    else
        r.gamma = k->tensor ? 0 : 1;
    double wave_ratio = here->sms / there->sms; /* many waves: the SM ratio */
    if (k->blocks > 0) {
        double mt_here = here->max_threads_per_sm > 0 ? here->max_threads_per_sm : 2048;
        double mt_there = there->max_threads_per_sm > 0 ? there->max_threads_per_sm : mt_here;
        r.waves_here = mb_proj_waves(k->blocks, mb_proj_resident(k->threads, mt_here), here->sms);
        r.waves_there = mb_proj_waves(k->blocks, mb_proj_resident(k->threads, mt_there), there->sms);
        wave_ratio = r.waves_there / r.waves_here;
    }
    double compute = wave_ratio * (f_here / here->sms) / (f_there / there->sms);
    double memory = here->bw / there->bw;
    r.bound = r.gamma >= 0.5 ? MB_PB_MEMORY : MB_PB_COMPUTE;
    /* A kernel that moves bytes and does no counted math, slower than its
     * bytes at this GPU's bandwidth: only that much of its time is the
     * memory's; the rest (strided access, latency, issue) is the SMs'. On a
     * lent H100/H200 pair the largest elementwise kernels ran at under half
     * the bandwidth and gained 6-10% from 39% more of it (docs/gap.md). */
    double moving = k->flops <= 0 && k->bytes > 0 ? k->bytes / here->bw : work;
    if (moving < work) {
        /* the rest runs on the CUDA cores whatever the data's dtype: their rate per SM, not the tensor cores' */
        double cores = wave_ratio * (here->flops[MB_PM_FP32] / here->sms) / (there->flops[MB_PM_FP32] / there->sms);
        r.seconds = overhead + moving * memory + (work - moving) * (cores > 0 && isfinite(cores) ? cores : compute);
        return r;
    }
    r.seconds = overhead + work * pow(memory, r.gamma) * pow(compute, 1 - r.gamma);
    return r;
}

/* ---- the timeline ----------------------------------------------------------- */

typedef struct lane_state {
    bool used;
    double orig_end, new_end;
} lane_state;

/* Processing order: GPU events and host events by their start, a sync's end
 * by its end (after the GPU events that start then, before the host events). */
typedef struct relay_item {
    double key;
    int rank; /* 0 GPU, 1 sync end, 2 host start */
    int idx;
} relay_item;

static int item_cmp(const void *a, const void *b)
{
    const relay_item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->idx - y->idx;
}

/* A sync, or a launch that waited for the GPU: ends when the GPU work it
 * waited for ends. */
static bool waits(const mb_proj_event *e)
{
    return e->kind == MB_PE_SYNC || (e->kind == MB_PE_LAUNCH && e->blocking);
}

/* A host event's new start: the lane's new end plus the gap it had here,
 * both host time, times the host scale. */
static void host_start(mb_proj_event *e, lane_state *l, double host)
{
    double prev_orig = l->used ? l->orig_end : 0, prev_new = l->used ? l->new_end : 0;
    e->new_start = prev_new + host * (e->start - prev_orig);
    e->new_end = e->new_start + host * (e->end - e->start); /* a sync's end is set later */
}

/* A kernel that waited for its launch keeps that delay times the host
 * scale (the launch path is host time); one queued behind the previous
 * kernel of its stream keeps its gap after it. */
static void gpu_place(mb_proj_event *ev, mb_proj_event *e, lane_state *s, double host)
{
    double prev_orig = s->used ? s->orig_end : -INFINITY, prev_new = s->used ? s->new_end : -INFINITY;
    double l_orig = -INFINITY, l_new = -INFINITY;
    if (e->launch >= 0) {
        l_orig = ev[e->launch].start;
        l_new = ev[e->launch].new_start;
    }
    double ready_orig = fmax(prev_orig, l_orig), ready_new = fmax(prev_new, l_new);
    if (!isfinite(ready_orig)) { /* first on its stream, no launch: keeps its offset */
        ready_orig = 0;
        ready_new = 0;
    }
    e->new_start = ready_new + (l_orig > prev_orig ? host : 1) * (e->start - ready_orig);
    e->new_end = e->new_start + e->new_seconds;
    s->used = true;
    s->orig_end = e->end;
    s->new_end = e->new_end;
}

/* A sync waits for the kernels launched before it started that ended here by
 * the time it ended. */
static void sync_end(mb_proj_event *ev, int n, mb_proj_event *e, double host)
{
    const double eps = 1e-12;
    double dep_orig = -INFINITY, dep_new = -INFINITY;
    for (int i = 0; i < n; i++) {
        const mb_proj_event *k = &ev[i];
        if (k->kind != MB_PE_GPU || k->end > e->end + eps)
            continue;
        double issued = k->launch >= 0 ? ev[k->launch].start : k->start;
        if (issued > e->start + eps)
            continue;
        dep_orig = fmax(dep_orig, k->end);
        dep_new = fmax(dep_new, k->new_end);
    }
    double tail = host * (e->end - fmax(e->start, dep_orig));
    e->new_end = fmax(e->new_start, dep_new) + tail;
}

int mb_proj_relay(mb_proj_event *ev, int n, int n_lanes, double step_end, double host_scale, double *new_end,
                  mb_err *err)
{
    relay_item *order = calloc((size_t)n * 2 + 1, sizeof *order);
    lane_state *host = calloc((size_t)n_lanes + 1, sizeof *host), *gpu = calloc((size_t)n_lanes + 1, sizeof *gpu);
    int rc = MB_OK, m = 0;
    if (order == NULL || host == NULL || gpu == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        if (ev[i].lane < 0 || ev[i].lane >= n_lanes || ev[i].launch >= n) {
            rc = mb_errf(err, MB_EUSAGE, "timeline event %d: lane %d of %d", i, ev[i].lane, n_lanes);
            goto fail;
        }
        order[m++] = (relay_item){ .key = ev[i].start, .rank = ev[i].kind == MB_PE_GPU ? 0 : 2, .idx = i };
        if (waits(&ev[i]))
            order[m++] = (relay_item){ .key = ev[i].end, .rank = 1, .idx = i };
    }
    if (m > 1)
        qsort(order, (size_t)m, sizeof *order, item_cmp);
    for (int j = 0; j < m; j++) {
        mb_proj_event *e = &ev[order[j].idx];
        if (e->kind == MB_PE_GPU) {
            gpu_place(ev, e, &gpu[e->lane], host_scale);
        } else if (order[j].rank == 2) {
            host_start(e, &host[e->lane], host_scale);
            if (!waits(e)) {
                host[e->lane] = (lane_state){ .used = true, .orig_end = e->end, .new_end = e->new_end };
            }
        } else {
            sync_end(ev, n, e, host_scale);
            host[e->lane] = (lane_state){ .used = true, .orig_end = e->end, .new_end = e->new_end };
        }
    }
    /* The step ends where its host thread ends it (ProfilerStep is a host
     * range): the lane that ran last here, plus what followed its last call;
     * or, when later, where the GPU ends it: its last event plus what followed
     * that here. A steady state makes a step wait for the previous one's GPU
     * work (through a sync or a full launch queue), so a GPU that gets slower
     * stretches the step even where this step shows no wait. */
    int last = -1;
    for (int l = 0; l < n_lanes; l++)
        if (host[l].used && (last < 0 || host[l].orig_end > host[last].orig_end))
            last = l;
    double gpu_orig = -INFINITY, gpu_new = -INFINITY;
    for (int i = 0; i < n; i++)
        if (ev[i].kind == MB_PE_GPU) {
            gpu_orig = fmax(gpu_orig, ev[i].end);
            gpu_new = fmax(gpu_new, ev[i].new_end);
        }
    double end = isfinite(gpu_orig) ? gpu_new + host_scale * (step_end - gpu_orig) : -INFINITY;
    if (last >= 0)
        end = fmax(end, host[last].new_end + host_scale * (step_end - host[last].orig_end));
    if (!isfinite(end))
        end = step_end; /* no events */
    *new_end = end;
fail:
    free(order);
    free(host);
    free(gpu);
    return rc;
}
