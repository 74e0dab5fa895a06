/* project.h: the kernel-level projection of a GPU trace onto another GPU.
 *
 * Each GPU kernel is scaled by what bounds it (Habitat, USENIX ATC 2021,
 * "roofline wave scaling"), with the waves of its grid counted on both GPUs:
 *
 *   T_there = T_here x (B_here / B_there)^g x C^(1-g)
 *   C       = (waves_there / waves_here) x (F_here / SM_here) / (F_there / SM_there)
 *
 * B is the memory bandwidth, F the peak of the kernel's math (tensor-core
 * dtype, or the CUDA cores' fp32), SM the SM count; F / SM is one SM's rate
 * (clock x FLOPs per clock), so C is the peak ratio when the grid fills many
 * waves and the per-SM ratio when it fits in one. g, the roofline exponent,
 * comes from the kernel's arithmetic intensity I (FLOPs / bytes) against the
 * target's ridge point R = F / B: g = 1 - I / (2R) below the ridge, R / (2I)
 * above it; 1 for a kernel that moves bytes and does no counted math, 0 for a
 * matmul/convolution/attention kernel whose bytes are unknown. A kernel that
 * moves bytes and does no counted math, and takes longer than its bytes need
 * at B_here, is split: the bytes' time bytes / B_here scales by bandwidth,
 * the rest (access pattern, latency, issue) like the SMs' CUDA-core rate
 * (C with F the fp32 peak, whatever the data's dtype):
 *
 *   T_there = (bytes / B_here) x (B_here / B_there) + (T_here - bytes / B_here) x C_fp32
 *
 * Kernels shorter than the latency bound keep their time: launch and
 * scheduling latency, not the GPU's speed, sets it on either machine.
 *
 * The step is then re-laid on the target's timeline (mb_proj_relay): host
 * calls keep their own durations and the gaps between them, kernels keep their
 * stream order and start no earlier than their launch, syncs end when the work
 * they waited for ends. A shorter kernel can so expose host time that it hid.
 * Pure arithmetic: no files (project_trace.c reads traces and datasheets). */
#ifndef MB_PROJECT_H
#define MB_PROJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware.h"
#include "mb.h"

/* The math a kernel runs on: index into mb_proj_gpu.flops. */
enum mb_proj_math { MB_PM_FP32 = 0, MB_PM_TF32, MB_PM_FP16, MB_PM_BF16, MB_PM_FP8, MB_PM_INT8, MB_PM_FP64, MB_PM_N };

/* What bounds a kernel, and the classes of the step's time split: copies
 * between host and device apart from communication between GPUs (a
 * single-GPU data loader's copies are not communication). The GPU's busy
 * classes come first (up to MB_PC_QUEUED); then its idle time: between
 * kernels it already had queued (kernel wait, as the step table's part
 * `queued`) and waiting on the host. */
enum mb_proj_class { MB_PC_TENSOR = 0, MB_PC_MEMORY, MB_PC_COPY, MB_PC_COMM, MB_PC_QUEUED, MB_PC_HOST, MB_PC_N };
enum mb_proj_bound { MB_PB_COMPUTE = 0, MB_PB_MEMORY, MB_PB_LATENCY, MB_PB_KEPT };

/* What a GPU event of a trace is, for the kernel time summed per step
 * (mb_proj_step_split.kernel): GEMM, convolution and attention kernels (the
 * matrix math class), memory-bound kernels with memsets and
 * device-to-device copies (the memory-bound class), host-device copies
 * (the copy class), peer copies and collectives (the communication
 * class). */
enum mb_proj_kind {
    MB_PK_GEMM = 0, MB_PK_CONV, MB_PK_ATTENTION, MB_PK_MEMORY, MB_PK_TRANSFER, MB_PK_COLLECTIVE, MB_PK_N
};

/* Kernels at or below this time (seconds) are latency-bound on any GPU. */
#define MB_PROJ_LATENCY_S 4e-6

typedef struct mb_proj_gpu {
    char name[96];
    double sms;            /* SM count; 0 unknown */
    double clock_mhz;      /* boost clock; 0 unknown */
    double fp32_clock_mhz; /* the clock a full FP32 load holds where the datasheet documents one below boost
                            * ([gpu] fp32_sustained_clock_mhz); 0: none, the boost clock */
    double sustained;      /* fraction of the datasheet's FP32 peak the board holds (mb_proj_sustained);
                            * 1 when none is documented; flops[MB_PM_FP32] includes it */
    double bw;             /* memory bandwidth, bytes/s */
    double flops[MB_PM_N]; /* dense peaks, FLOP/s (OP/s for int8); 0 unknown */
    double max_threads_per_sm; /* 0: as the origin */
    double pcie_bw;        /* bytes/s one way, 0 unknown */
    double nvlink_bw;      /* bytes/s total, 0 unknown */
    double link_bw;        /* GPU to GPU, bytes/s one way: half the NVLink total, or PCIe where the datasheet
                            * says it has no NVLink (nvlink_gbps = 0); 0 unknown */
} mb_proj_gpu;

/* Fills g from a GPU datasheet ([gpu] sms, boost_clock_mhz,
 * fp32_sustained_clock_mhz, max_threads_per_sm; [peak]; [memory]
 * bandwidth_gbps; [interconnect]). The FP32 peak is the one the board holds:
 * peak x mb_proj_sustained. MB_EUSAGE naming the file when it lacks the SM
 * count or the bandwidth the model needs, or gives an FP32 sustained clock
 * without a boost clock or above it. */
int mb_proj_gpu_from_datasheet(const mb_datasheet *d, mb_proj_gpu *g, mb_err *err);

/* The fraction of its printed FP32 peak (printed at the boost clock) a board
 * holds under a full FP32 load: sustained / boost, where its datasheet gives
 * [gpu] fp32_sustained_clock_mhz, the clock its power limit is documented to
 * hold it at (with the source of that behaviour: the L4, 72 W); 1 where it
 * gives none or a figure is missing. Not an architecture rule: the H100 SXM
 * (128 FP32 lanes per SM like the L4) held 1980 MHz, its boost, through
 * mlbench's FP32 FMA peak (65.6 of 66.9 TFLOP/s at 314 W of 700 W) and
 * cuBLASLt's FP32 GEMM (658 W), so it keeps its printed peak. Tensor-core
 * peaks and memory bandwidth are not scaled. */
double mb_proj_sustained(double sustained_mhz, double boost_mhz);

/* Full waves a grid of `blocks` needs at `resident` blocks per SM on `sms`
 * SMs: ceil(blocks / (resident x sms)); at least 1. */
double mb_proj_waves(double blocks, double resident, double sms);

/* Blocks of `threads` threads one SM holds at once, by its thread limit
 * (max_threads_per_sm) and the 32-block limit; 1 when unknown. */
double mb_proj_resident(double threads, double max_threads_per_sm);

/* The roofline exponent g in [0, 1] of a kernel with `flops` FLOPs and
 * `bytes` bytes against ridge point `ridge` (FLOPs per byte); flops <= 0
 * gives 1 (memory), bytes <= 0 with flops > 0 gives 0 (compute). */
double mb_proj_gamma(double flops, double bytes, double ridge);

typedef struct mb_proj_kernel {
    double seconds;       /* measured here */
    double flops, bytes;  /* counted from the op's shapes; 0 = unknown */
    int math;             /* mb_proj_math */
    bool tensor;          /* matmul / convolution / attention kernel */
    double blocks;        /* grid size; 0 = unknown */
    double threads;       /* block size; 0 = unknown */
    double overhead;      /* seconds of `seconds` that no GPU speed changes, kept on the target: the
                           * per-operator cost of the framework and launch measured here (the time an
                           * operator that runs no GPU work takes); 0 for a kernel timed on the GPU */
} mb_proj_kernel;

typedef struct mb_proj_result {
    double seconds;       /* projected there */
    double gamma;
    int bound;            /* mb_proj_bound */
    double waves_here, waves_there;
    bool no_peak;         /* the target has no peak for the kernel's math: kept */
} mb_proj_result;

/* Projects one kernel from `here` onto `there`: its time less its
 * overhead is scaled (latency-bound when that is MB_PROJ_LATENCY_S or less),
 * the overhead is added back unchanged. */
mb_proj_result mb_proj_kernel_time(const mb_proj_kernel *k, const mb_proj_gpu *here, const mb_proj_gpu *there);

/* FLOPs of scaled-dot-product attention (SDPA, FlashAttention) with query
 * [b, h, l, d] and key/value [b, h, s, d]: two matmuls, Q K^T and P V, of
 * 2 b h l s d each = 4 b h l s d forward; the backward recomputes P and runs
 * four more (dQ, dK, dV, dP) = 10 b h l s d. A causal mask halves both
 * (`causal`). The softmax's few FLOPs per element are not counted. */
double mb_proj_sdpa_flops(double b, double h, double l, double s, double d, bool backward, bool causal);

/* ---- the step re-laid on the target's timeline ------------------------- */

enum mb_proj_ev { MB_PE_HOST = 0, MB_PE_LAUNCH, MB_PE_SYNC, MB_PE_GPU };

/* One event of a step, in the trace's order per thread / stream. Times in
 * seconds from the step's start. */
typedef struct mb_proj_event {
    int kind;             /* mb_proj_ev */
    int lane;             /* host thread (LAUNCH/SYNC) or GPU stream (GPU), 0-based */
    double start, end;    /* measured here */
    int launch;           /* GPU: index of its LAUNCH event, -1 */
    bool launch_known;    /* GPU with launch -1: its launch call was recorded outside the step's events (a host
                           * that ran ahead, a launch in an earlier step) and ended at launch_end, measured here */
    double launch_end;
    bool blocking;        /* LAUNCH: it waited for room in the launch queue here (back-pressure): it
                           * ends, like a sync, when the GPU work it waited for ends */
    double new_seconds;   /* GPU: its projected duration (set by the caller) */
    /* out (mb_proj_relay) */
    double new_start, new_end;
} mb_proj_event;

/* Re-lays the events with their GPU durations replaced by new_seconds;
 * returns the new step end: the step is a host range, so it ends where the
 * host lane that ran last ends, plus what followed its last call up to
 * `step_end` (a step without host calls: its last GPU event). Host
 * events of a lane keep their durations and the gaps between them; a
 * kernel starts at max(its launch, the end of the previous kernel of its
 * stream) + the delay it had here beyond both; a sync ends at
 * max(its start, end of the kernels launched before it that ended before it
 * ended here) + its tail here; a blocking launch likewise. The step ends
 * at the later of that host end and the GPU's (its last event's new end
 * plus the time from its end here to the step's end): in a steady state a
 * slower GPU's spill-over makes the next step wait. With new_seconds equal
 * to the measured durations and host_scale 1, every event keeps its time.
 *
 * host_scale (0..1) multiplies the host's time: each host call, the gaps
 * between them, a sync's tail, the delay of a kernel that waited for its
 * launch and the step's tails. A profiler lengthens the host's side of a
 * step (each recorded op costs it), not the kernels: a trace recorded with
 * record_shapes can be host-bound where the same loop without the profiler
 * keeps the GPU busy (mb_proj_trace_calibrate). MB_EUSAGE on lanes out of
 * range. */
int mb_proj_relay(mb_proj_event *ev, int n, int n_lanes, double step_end, double host_scale, double *new_end,
                  mb_err *err);

/* ---- a whole trace (project_trace.c) -------------------------------------- */

typedef struct mb_proj_trace mb_proj_trace; /* the trace's kernels, launches, syncs, steps */

/* Reads the trace; *out NULL with the reason in err. */
int mb_proj_trace_load(const char *path, mb_proj_trace **out, mb_err *err);
void mb_proj_trace_free(mb_proj_trace *t);
/* The GPU the trace ran on (deviceProperties name; "" when absent) and the
 * datasheet matched to it (NULL when none matched). */
const char *mb_proj_trace_device(const mb_proj_trace *t);
int mb_proj_trace_steps(const mb_proj_trace *t);

typedef struct mb_proj_step_split {
    double step;              /* mean step seconds */
    double cls[MB_PC_N];      /* exposed seconds per class (sum = step) */
    double gpu_busy;          /* seconds the GPU was busy */
    double kernel[MB_PK_N];   /* mean seconds per step of the GPU events of each kind, summed (overlapping
                               * events each count: not exposed time), as recorded or as projected */
} mb_proj_step_split;

typedef struct mb_proj_outcome {
    mb_proj_step_split here, there;
    long long kernels, with_shapes, latency_bound, compute_bound, memory_bound;
    long long no_peak;        /* kernels kept: the target has no peak for their math */
    int steps;
    /* The host ran ahead (steps cut on the GPU's timeline): the step is the
     * re-laid GPU step, at least the host's own time per step (times
     * host_scale: host_step, per step); host_wait_* is what that floor added
     * to each side's mean step (0 where the GPU was the slower). */
    bool gpu_timeline;
    double host_step, host_wait_here, host_wait_there;
} mb_proj_outcome;

/* Projects the trace from `here` onto `there` (NULL there: the identity, for
 * the split of the measured step), its host time times host_scale
 * (mb_proj_relay; 1: as recorded). */
int mb_proj_trace_run(const mb_proj_trace *t, const mb_proj_gpu *here, const mb_proj_gpu *there, double host_scale,
                      mb_proj_outcome *out, mb_err *err);

/* The host scale that makes the trace's mean step, re-laid as recorded,
 * last `step_seconds`: the step of the same loop timed without the
 * profiler. 1 when that is as long as the trace's step or longer (the
 * profiler's cost is not added back), 0 when even the GPU's part of the
 * trace is longer (then *floor_seconds, the mean step at scale 0, says by
 * how much); else found by bisection to 1e-4 of the step. The re-laid step
 * grows with the scale. *trace_seconds: the mean step as recorded. */
int mb_proj_trace_calibrate(const mb_proj_trace *t, const mb_proj_gpu *here, double step_seconds, double *host_scale,
                            double *trace_seconds, double *floor_seconds, mb_err *err);

#endif
