/* diagnose.h: the utilisation patterns of the seed method (GPU compute
 * bound, CPU CUDA-API/launch bound, synchronisation bound, CPU compute
 * bound) plus data-loading, host<->device copy and communication bound,
 * recognised from a gap's stage shares, the run-level utilisations and,
 * for a trace, the reader's evidence (docs/traces.md). Thresholds come from
 * configs/gap/thresholds.ini and remedies from configs/gap/remedies.ini. */
#ifndef MB_DIAGNOSE_H
#define MB_DIAGNOSE_H

#include <stdbool.h>

#include "gap.h"
#include "gapconfig.h"

/* The figures the patterns are tested on. Shares are of the run's wall
 * time; -1 = unknown. */
typedef struct mb_diag_figures {
    const char *source;        /* "stages" or "stages + trace evidence" */
    double wall;               /* seconds */
    double gpu_util, cpu_util; /* 0..1 */
    double gpu_idle_share;     /* trace: idle / window */
    double compute_share;      /* GPU gemm/conv/membw time */
    double compute_efficiency; /* their time-weighted efficiency against the ceilings */
    double launch_share;       /* host time in kernel launches */
    double launch_idle_ratio;  /* trace: host launch time / GPU idle time */
    double launches;
    double setup_share;        /* trace step table: GPU idle in allocation and set-up calls (cudaMalloc,
                                  cudaFree, module loading: a launch call of 10 ms or more) */
    double setup_steps;        /* ... steps whose window holds such a call; -1 unknown (no steps) */
    double optimizer_steps;    /* trace: Optimizer.step annotations (0: the loop steps no torch.optim optimizer,
                                  a forward-only trace); -1 unknown (a stage file) */
    int cpu_bf16;              /* the ceilings' CPU: native bf16 (avx512_bf16, amx_bf16) 1, none 0 (an x86 CPU that
                                  lists neither), -1 unknown */
    double compiled_regions;   /* trace: torch.compile's compiled code running ("Torch-Compiled Region"); -1
                                  unknown */
    double fused_optimizer;    /* trace: a fused optimizer's steps or ops (Optimizer.step#FusedAdam.step,
                                  aten::_fused_adamw_); -1 unknown */
    double foreach_optimizer;  /* trace: aten::_foreach_* ops inside Optimizer.step; -1 unknown */
    bool hip_runtime;          /* trace: its runtime calls are HIP's (an AMD GPU) */
    bool shapes_recorded;      /* trace: some op recorded its shapes (Input Dims) */
    bool array_form;           /* trace: the bare JSON array of a PyTorch without Kineto (no shapes, ever) */
    double gemm_share, conv_share, attention_share; /* trace step table: GEMM, convolution and fused attention
                                                       (SDPA, flash, cuDNN's) kernels */
    double graph_replays;      /* trace: CUDA graph replays (cudaGraphLaunch) in the trace; -1 unknown */
    double setup_calls_s;      /* trace: the named set-up calls' time (host.setup.calls) */
    double setup_capture_s;    /* ... of it, graph captures (StreamBeginCapture ... EndCapture) */
    double setup_profiler_s;   /* ... of it, the profiler's own buffers (Activity Buffer Request) */
    double setup_mallocs, setup_frees; /* ... device allocations and frees among them, in the whole trace */
    int steps;                 /* the run's steps; 0 unknown */
    double backward_ops;       /* trace: ops and autograd nodes of a backward pass (0: inference); -1 unknown
                                  (a stage file, a trace without the model's ops) */
    double sync_share;         /* stages: sync stage time; trace: GPU idle while the host waits in
                                  syncs/blocking copies */
    double sync_host_share;    /* trace: host time in sync calls and blocking copies; -1 otherwise */
    double syncs;              /* the calls that time is in: sync calls and blocking copies */
    double blocking_copies;    /* ... of them blocking copies (a trace's); 0 none or unknown */
    double sync_host_s;        /* trace: host time in sync calls and blocking copies (the whole trace); -1 */
    double longest_wait_s;     /* trace: the longest of them in the steps (the closing synchronize left out); -1 */
    double data_share;         /* data loading: disk stages, stages named like loading, DataLoader */
    double data_in_process;    /* trace: share of the DataLoader's batches loaded in the training process
                                  (_SingleProcessDataLoaderIter: num_workers=0); -1 unknown */
    double copy_share;         /* host<->device copies */
    double pageable_share;     /* ... of them from pageable memory */
    double pinned_share;       /* ... of them from pinned memory */
    double comm_share;         /* collectives */
    double comm_sharded_s, comm_allreduce_s; /* ... seconds in all-gather + reduce-scatter (FSDP, ZeRO), and in
                                                all-reduce (DDP) */
    double comm_allreduce_lowp_s; /* ... of it in bf16 or fp16 */
    double cpu_share;          /* compute stages marked "device": "cpu" */
    double cpu_matmul_share;   /* ... of them GEMM/conv */
    double cpu_memory_share;   /* ... of them memory-bound ops against host memory (a trace's hostmem stage) */
    double cpu_other_ops_share; /* ... of them the model's other ops without FLOPs or bytes (role compute) */
    double cpu_optimizer_share; /* ... of them the optimizer step (role optimizer: its ops and the Python between) */
    double cpu_host_share;      /* ... the rest: Python and other host code between the ops */
    double cpu_python_s;        /* a CPU-only trace: its step's Python and other host code (seconds), -1 unknown */
    double cpu_python_block_s;  /* ... of which each step's longest stretch in no op, on average; -1 unknown */
    bool cpu_python_one_block;  /* ... that stretch [cpu_compute_bound] python_block_share_min of it or more */
    double cpu_python_long_s;   /* ... of which in stretches of 1 ms or more, a step on average; -1 unknown */
    double cpu_python_long_n;   /* ... their number, a step on average; -1 unknown */
    bool cpu_python_blocks;     /* ... the longest, or those, python_block_share_min of it or more */
    const char *cpu_python_range; /* ... the loop's own record_function holding half of those or more; NULL none */
    double cpu_python_range_s;  /* ... how much of them, a step */
    double cpu_dense_embedding_s; /* a CPU-only trace: a step's time in an embedding's dense backward; -1 unknown */
    double cpu_dense_embedding_share; /* ... of the step (its ProfilerStep window); -1 unknown */
    bool cpu_dense_embedding;   /* ... [cpu_compute_bound] dense_embedding_share_min of the step or more */
    bool cpu_matmul_unshaped;  /* a CPU GEMM/conv stage without FLOPs */
    int gpus_unrecorded;       /* trace without GPU events whose deviceProperties lists GPUs */
    double periodic_share;     /* stages with role checkpoint, eval or logging */
    double unattributed_share; /* 'other' stages with no role and no device: no pattern covers them */
    bool random_disk;          /* a data stage reads at random offsets */
    /* A simplify run's loader (simplify.data_loading): it named its own
     * remedies (read amplification: madvise, readahead, shards), and whether
     * its dataset fits in memory (-1 unknown). */
    bool loader_remedies;
    bool loader_storage_bound; /* ... it was storage-bound: no decoding to move or cache */
    int dataset_fits;
    bool fp32_compute;         /* GEMM/conv time in fp32 */
    bool tf32_compute;         /* ... in tf32 (fp32 ops whose kernels ran TF32 math) */
    bool fp8_compute;          /* ... in fp8 for half of it or more (recorded types, or the kernels' names) */
    double lowp_share;         /* the GEMM/conv time in fp16, bf16, fp8 or int8: by the stages' types, or by the
                                  kernels' names (trace.matmul_math_seconds), whichever says more; -1 unknown */
    /* From a trace's step table (evidence "step"); step_table false when
     * the run has none. Shares of the step: GPU busy by group, GPU idle by
     * what the host did; together they add up to 1. */
    bool step_table;
    const char *span;          /* "step" when the run has steps, else "run": what a share is of */
    double tensor_share;       /* GEMM, convolution, attention kernels */
    double memory_share;       /* memory-bound kernels (elementwise, normalization, ...) */
    double launch_idle_share;  /* GPU idle while the host is in launch calls */
    double host_idle_share;    /* GPU idle while the host runs other code */
    double queued_share;       /* GPU idle with its next kernel queued (kernel wait: the GPU's own gaps) */
    double kernels_per_step;   /* -1 unknown */
    double layout_share, layout_s, layout_kernels; /* cuDNN's NCHW<->NHWC conversions in a step (share, seconds,
                                                      kernels; evidence step.layout_conversions); -1 unknown */
    double fp32_math_share, fp32_math_s, fp32_math_kernels; /* GEMM/conv kernels in fp32 on the CUDA cores by
                                                               their names (step.fp32_math); -1 unknown */
    double small_grid_share, small_grid_s, small_grid_kernels, sms; /* kernels on fewer blocks than half the GPU's
                                                                       SMs (step.small_grids); -1 unknown */
    const char *small_grid_largest; /* ... the one with the most time in the trace; NULL none */
    double small_grid_largest_s;
    int compute_major;         /* trace: the GPU's compute capability (deviceProperties computeMajor); -1 unknown */
    int compute_minor;         /* ... and its computeMinor; -1 unknown */
    double median_kernel_s;    /* -1 unknown */
    double host_op_s;          /* GPU-idle host time (launch calls and other host code) per op the trace
                                  recorded in a step: what dispatching each op cost; -1 unknown */
    double ops_per_step;       /* ops (cpu_op events) the trace recorded per step; -1 unknown */
    double metadata_op_s;      /* the median time of the trace's ops that do no work (aten::view, aten::empty:
                                  [dispatch_op]): dispatching one op here, profiler included; -1 unknown */
    double metadata_ops;       /* ... how many; -1 unknown */
    double host_kernel_s;      /* the same GPU-idle host time per kernel of a step; -1 unknown */
    double launch_ceiling_s;   /* seconds per launch at the measured launch ceiling; -1 unknown */
    double tensor_efficiency;  /* GEMM/conv stages with FLOPs against their ceilings; -1 unknown */
    double tensor_held_s;      /* ... the seconds of those held to a ceiling */
    double tensor_beyond_s;    /* ... and of those faster than their nearest case (no ceiling for them) */
    double tensor_bytes_s;     /* ... of those held to a ceiling, held to their bytes ([roofline]: memory-bound
                                  products, a decode step's skinny GEMMs) */
    double tensor_intensity;   /* ... their FLOPs a byte; -1 none */
    double tensor_all_s;       /* the GEMM/conv/attention stages' seconds, with FLOPs or time only */
    /* Memory-bound ops with recorded shapes (stage MB_MEMBOUND_STAGE): bytes/s
     * of their kernels, the membw ceiling it was held against, and the share
     * of all memory-bound kernel time they cover. -1 unknown. */
    double memory_rate;        /* bytes/s */
    double memory_ceiling;     /* bytes/s the stage is held to; -1 when no membw case matched */
    double memory_bandwidth;   /* the matched case's bandwidth, bytes/s: above the ceiling when each kernel
                                  also pays the GPU's least time per kernel ([kernel_floor]) */
    double memory_efficiency;  /* memory_rate / memory_ceiling */
    const char *memory_ceiling_case; /* id of the matched case; NULL none */
    const char *memory_ceiling_label; /* ... as the text names it (its label) */
    double memory_shaped_share;
    bool cpu_only;             /* a trace without GPU events (its step table is the CPU's, trace_cpu.c) */
    /* A simplify run's threads: torch's per rank, the ranks on its machine
     * and the CPUs it may run on (-1: unknown, as in every trace). */
    int torch_threads, host_ranks, cpus_allowed;
    /* A simplify run's full loop (simplify.cpu): the CPU its processes took
     * a step over the CPUs they may use, when that keeps them busy (no core
     * idle: cpus_busy), and whether its loader's workers share them with the
     * step (cpus_shared); cpu_floor_s < 0: neither, or unknown. */
    bool cpus_busy, cpus_shared;
    double cpu_floor_s, cpu_step_s, cpu_workers_s, cpu_main_s, cpu_main_wait_s, cpu_busy_share;
    int cpu_cpus, cpu_workers;
} mb_diag_figures;

typedef struct mb_finding {
    char id[40];      /* section name in remedies.ini: "data_loading_bound" */
    char title[96];
    double weight;    /* the share of time behind it: findings are sorted by it */
    char **evidence;
    int n_evidence;
    char **remedies;
    int n_remedies;
} mb_finding;

/* Findings are sorted by weight: findings[0] is the primary explanation;
 * runner_up says findings[1] is close to it (weight at least
 * [diagnosis] runner_up_ratio of the primary's). n == 0 means balanced:
 * no pattern passed its threshold and none explains most of the run;
 * `balanced` then holds the shares that say so. */
typedef struct mb_diagnosis {
    mb_diag_figures fig;
    mb_finding *findings;
    int n;
    bool runner_up;
    char balanced[512];
    /* The run's one bottleneck, the same words in every view (headline,
     * JSON, diagnosis, page): the primary finding's title and weight, or
     * "balanced"; bottleneck_stage is the largest stage (by exposed time)
     * behind it, an index into the gap's stages. */
    char bottleneck[96];
    /* A host-bound bottleneck read from a trace without --step-ms: an upper
     * bound (the profiler's own host time is in it), said with the range the
     * step lies in; "" otherwise. */
    char bottleneck_note[400];
    double bottleneck_share;
    int bottleneck_stage;
    /* Where a stage's name was used as a hint (no role given): said, never
     * silent. */
    char **notes;
    int n_notes;
} mb_diagnosis;

/* MB_EUSAGE naming the file and key when a threshold is missing. */
int mb_diagnose(const mb_gap *g, const mb_ini *thresholds, const mb_ini *remedies, mb_diagnosis *out,
                mb_err *err);
void mb_diagnosis_free(mb_diagnosis *d);

/* Figures only (used by mb_diagnose; exposed for tests). */
void mb_diag_figures_compute(const mb_gap *g, const mb_ini *thresholds, mb_diag_figures *f);

#endif
