/* stages.h: what a real run is made of, as the gap model sees it.
 *
 * Two readers produce an mb_run: the stage-metrics file reader (JSON or CSV,
 * harness/analysis/gap/stagefile.c) and the PyTorch profiler trace reader
 * (harness/analysis/trace/trace.c). The gap model (harness/analysis/gap/gap.c) never reads files. */
#ifndef MB_STAGES_H
#define MB_STAGES_H

#include <stdbool.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mb.h"

/* The trace reader's stage of memory-bound ops with recorded shapes (bytes
 * over the GPU time of their kernels); the diagnosis looks it up by name. */
#define MB_MEMBOUND_STAGE "memory-bound ops"
/* The compute stage of a simplify stage file (python/mlbench/simplify.py): its
 * "simplify.flops_not_counted" says why it has no FLOPs. */
#define MB_SIMPLIFY_COMPUTE_STAGE "forward+backward"
/* Its data-loading stage: what its loader alone read ("simplify.data_loading")
 * is about this stage. */
#define MB_SIMPLIFY_DATA_STAGE "data loading"
/* The GPU idle time no launch, sync or DataLoader call explains (a trace's host code). */
#define MB_HOST_CODE_STAGE "host code (GPU idle)"
/* The GPU idle with its next kernel already launched: its own gaps between
 * queued kernels (HTA's kernel wait), role "overhead". */
#define MB_KERNEL_WAIT_STAGE "kernel wait (GPU idle)"
/* The GPU idle while the host allocates, frees, creates streams or loads
 * modules (a launch call of 10 ms or more, a kernel's first of 100 us or more), role "overhead". */
#define MB_SETUP_STAGE "allocation and set-up (GPU idle)"
/* The GPU idle while the host is in a collective call (c10d, record_param_comms), role "communication". */
#define MB_HOST_COLL_STAGE "collective on the host (GPU idle)"

/* A membw stage's op and a stage's role (docs/stage-format.md). */
#define MB_STAGE_OPS "read|write|copy|triad"
#define MB_STAGE_ROLES "data|checkpoint|eval|logging|communication|compute|optimizer|overhead"

typedef struct mb_stage {
    char *name;       /* "forward", "dataloading", ... */
    char *component;  /* a stage component (vocabulary.h) */
    /* What identifies the closest ceiling (NULL / 0 when not applicable). */
    char *dtype;      /* gemm/conv: fp32|tf32|fp16|bf16|fp8|int8|fp64; collectives: float|half|bf16 */
    char *direction;  /* copy: h2d|d2h|d2d; conv: fwd (a trace without a backward pass) */
    char *memory;     /* copy: pageable|pinned */
    char *pattern;    /* disk: sequential|random */
    long long block_size; /* disk: bytes per read; copy/allreduce: bytes per call (message size) */
    int ranks;        /* collectives */
    /* CPU stages: the cores the stage may use (0 = not said: all the
     * machine's). A rank of N sharing a host's CPUs is held against the case
     * of its share of them, not the machine's. */
    int threads;
    /* The work and the time. */
    double work;      /* total over the run, in work_unit */
    char *work_unit;  /* "flop" | "byte" | "launch" | "sync" | "io" | "s" (other: time only) */
    double seconds;   /* total measured time of the stage over the run */
    long long count;  /* number of calls/events making up the stage (0 = unknown) */
    char *source;     /* where it came from: "file.json:stages[3]" or "trace: 412 kernels" */
    /* Where the work ran: "gpu" | "cpu"; NULL = the component's usual place
     * (gemm, conv, copy, membw, launch, sync, collectives: gpu; disk,
     * hostmem: cpu). Keeps a GPU GEMM from matching an OpenBLAS ceiling. */
    char *device;
    /* The part of `seconds` not hidden behind other work (a launch while the
     * GPU is busy, a sync waiting for busy kernels, a copy overlapping
     * compute): only exposed time is lost or gained. has_exposed false = all
     * of it (stage files without "exposed_seconds"). */
    bool has_exposed;
    double exposed_seconds;
    /* The part of `seconds` with no other work on its device at all (a trace's copy, when copies of another
     * kind run at once): all that the stage alone at its ceiling can save, whatever share of the overlap its
     * exposed time holds. has_alone false = not known (then exposed bounds it). */
    bool has_alone;
    double alone_seconds;
    /* membw: the memory traffic, read|write|copy|triad (a memset writes);
     * NULL = not said (the matching prefers copy). Matched against the
     * case's `op`. */
    char *op;
    /* What the stage is for, when its component does not say it (docs/
     * stage-format.md): data|checkpoint|eval|logging|communication|compute
     * (the model's own ops no benchmark measures as one: a CPU step's
     * elementwise work, simplify's "fwd+bwd: other ops", a CPU trace's "other
     * aten ops"), optimizer (a CPU step's optimizer step, its ops the CPU's
     * work, not host code), overhead (a GPU idle between work it has queued);
     * NULL = not said. The diagnosis decides from component and
     * role, never from the name alone. */
    char *role;
    /* Stage files version 2 (scripts/mlbench_simplify.py): the time the same
     * work took with the part run alone, the rest of the loop stubbed out
     * (docs/simplify.md). `seconds` stays the time inside the full loop. */
    bool has_isolated;
    double isolated_seconds;
    /* The work done in that time when it is not `work` (a loader alone read
     * more or less than the loop, whose page cache served part of it); the
     * levels compare rates then, and times for the loop's work. */
    bool has_isolated_work;
    double isolated_work;
    /* gemm (a trace's matmuls with their shapes): the bytes its ops move at least, operands and outputs once;
     * 0 = not known. The roofline's other side ([roofline] in matching.ini): a skinny product is held to these
     * bytes at the memory ceiling when that takes longer than its FLOPs at the GEMM case's rate. */
    double min_bytes;
} mb_stage;

/* Exposed seconds of a stage, clamped to [0, seconds]. */
static inline double mb_stage_exposed(const mb_stage *s)
{
    if (!s->has_exposed || s->exposed_seconds >= s->seconds)
        return s->seconds;
    return s->exposed_seconds > 0 ? s->exposed_seconds : 0;
}

/* Where a stage's work ran: its `device`, else its component's default
 * (docs/stage-format.md: disk, hostmem and other on the CPU, the rest on the
 * GPU). */
static inline bool mb_stage_on_gpu(const mb_stage *s)
{
    if (s->device)
        return strcmp(s->device, "gpu") == 0;
    return strcmp(s->component, "disk") != 0 && strcmp(s->component, "hostmem") != 0 &&
           strcmp(s->component, "other") != 0;
}

/* Work a GPU did: a stage on a GPU with a component (an 'other' stage says
 * nothing of what ran where). A run with none is a CPU run. */
static inline bool mb_stage_gpu_work(const mb_stage *s)
{
    return mb_stage_on_gpu(s) && strcmp(s->component, "other") != 0;
}

typedef struct mb_run {
    char *path;       /* the file it was read from */
    char *kind;       /* "stage-file" | "pytorch-trace" */
    mb_stage *stages;
    int n_stages;
    int steps;        /* 0 = unknown */
    double step_seconds; /* wall time of one step (median when from a trace); 0 = unknown */
    double total_seconds; /* wall time covered by the stages / the trace; 0 = unknown */
    /* Optional run-level figures (negative = unknown). */
    double gpu_utilization; /* 0..1 */
    double cpu_utilization; /* 0..1 */
    double batches_per_second;
    /* Reader-specific evidence kept for the diagnosis and the report: for a
     * trace, per device/per step busy/idle/host-wait, time by kernel class,
     * launch/sync counts and host time, data-loader time, achieved rates,
     * and "partial": [reasons] when the trace lacked something. */
    cJSON *evidence;
    char **warnings;
    int n_warnings;
} mb_run;

void mb_run_init(mb_run *run);
void mb_run_free(mb_run *run);
/* Appends a copy of *s (deep copy) to the run. */
int mb_run_add_stage(mb_run *run, const mb_stage *s, mb_err *err);
void mb_run_warn(mb_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads a stage-metrics file (.json or .csv). MB_EUSAGE with file:line or
 * JSON path on malformed input; nothing half-built is returned. */
int mb_stagefile_read(const char *path, mb_run *out, mb_err *err);
/* Reads a PyTorch profiler (Kineto) trace, .json or .json.gz, streaming. */
int mb_trace_read(const char *path, mb_run *out, mb_err *err);
/* Sets a trace's step to the loop's own, timed without the profiler
 * (`gap --step-ms`): the step table and the stages' exposed time scale to it
 * (trace_step.c says how). MB_EUSAGE when the run has no GPU step table or
 * the step is under half the GPU's busy time. */
int mb_trace_set_step(mb_run *run, double step_seconds, mb_err *err);

#endif
