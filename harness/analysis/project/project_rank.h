/* project_rank.h: `mlbench gap --target LIST|all`: the run projected onto
 * several machines, ranked by step time and, with prices, by cost.
 *
 * A PyTorch trace is projected kernel by kernel (project.h); a stage file
 * keeps the per-stage model of gap.c (each stage scaled by one ratio), and
 * the output says which model made each row. Machines: the datasheets of
 * configs/hardware (kind gpu), the reference machines of results/reference
 * (their measured ceilings over their datasheet), and results files. */
#ifndef MB_PROJECT_RANK_H
#define MB_PROJECT_RANK_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ceilings.h"
#include "gapconfig.h"
#include "mb.h"
#include "project.h"
#include "project_checked.h"
#include "stages.h"

typedef struct mb_rank_opts {
    const char *targets;          /* "all", or names/paths separated by commas */
    const char *const *prices;    /* "NAME=USD_PER_HOUR" */
    int n_prices;
    const char *prices_file;      /* lines NAME = USD_PER_HOUR (# ; comments) */
    long long epoch_steps;        /* steps per epoch, 0 = not given */
    const char *phase;            /* ceiling phase of measured compute cases */
    double step_seconds;          /* the loop's step without the profiler (--step-ms), 0 = not given */
    double host_seconds;          /* the host's own time to issue a step without the profiler (--host-ms), 0 = not
                                   * given: closes the range of a loop whose host runs ahead */
} mb_rank_opts;

typedef struct mb_rank_row {
    char name[64];        /* what --target named: a datasheet stem, reference name or file */
    char label[96];       /* the machine */
    char source[16];      /* "datasheet" | "measured" */
    char model[16];       /* "kernel" | "per-stage" */
    bool ok;
    char note[1200];      /* why not projected, or what the row lacks */
    double step;          /* projected seconds per step */
    double cls[MB_PC_N];  /* of which, by class */
    double kernel[MB_PK_N]; /* kernel model: the projected GPU events' seconds per step, by kind, summed */
    double price;         /* USD per hour, 0 = none */
    /* How far projections onto this GPU have been from what it measured, in the row's
     * mode (configs/gap/projection_error.ini, project_checked.h): mean absolute %, over
     * `checked_n` projections; checked_n 0 = never checked (or a per-stage row), then
     * checked.nearest names the nearest checked class. */
    double checked_pct;
    long checked_n;
    mb_checked checked;
    /* Kernels per step that kept their time for want of a peak for their math on this
     * GPU's datasheet: the step is then a lower bound, ranked after the rows projected whole. */
    long long kept;
    /* Above `step` when the host's own time is not known and may bound the
     * step up to this (a loop that never synchronises, GPU-bound here, onto a
     * GPU whose work takes less than the host's upper bound): `step` is then
     * the GPU's, the figure ranked (mb_ranking.host_open). 0 otherwise. */
    double step_max;
    /* The rank: 1 for the best; machines the model cannot tell apart (their
     * steps, or costs, within the expected error of each other) share one.
     * 0 when not ranked (not projected). */
    int rank;
    double error_pct;     /* the error the grouping allowed this row: its checked error, else its mode's */
} mb_rank_row;

typedef struct mb_ranking {
    char here[128];       /* the machine the run ran on */
    char here_source[16];
    char model[16];       /* "kernel" | "per-stage" */
    char per_stage_why[1024]; /* a trace ranked by the per-stage model: why not the kernel model ("" otherwise) */
    bool other_gpu;       /* refused: the trace's GPU has no datasheet and the ceilings are another GPU's, so no
                           * model can project it (the per-stage one would scale its stages from them) */
    double here_step;
    double here_cls[MB_PC_N];
    double here_kernel[MB_PK_N]; /* kernel model: the trace's GPU events' seconds per step, by kind, summed */
    double trace_step;    /* the trace's mean step as recorded (kernel model) */
    double step_given;    /* --step-ms, seconds; 0 = not given */
    double host_scale;    /* the host-time scale that gives the trace that step (1: as recorded) */
    /* The host ran ahead of a GPU-bound step here (steps cut on the GPU's
     * timeline) and its own time without the profiler is not known: at most
     * host_upper a step (the profiled host's, or the step given, which the
     * host kept pace with). Rows whose GPU work is shorter carry step_max. */
    bool host_open;
    double host_upper;
    double host_given;    /* --host-ms, seconds (host_open only): each row's step is its GPU's time or this */

    double gpu_floor;     /* the trace's step re-laid with no host time (when step_given is shorter than the trace's) */
    int steps;
    long long epoch_steps;
    long long kernels, with_shapes;
    mb_rank_row *rows;    /* ranked: fastest first, rows that failed last */
    int n;
    char **notes;
    int n_notes;
    bool by_cost;         /* prices given: the priced machines ranked by cost per step, before the others */
    bool host_run;        /* the step is mostly compute on the host CPU (a CPU-only run): its "host" class is the
                             CPU's own work, not a GPU's idle time */
    bool idle_bound;      /* the GPU idles (on the host or between kernels it had queued) at least half of the
                             step on every machine projected: no GPU helps */
    bool host_bound;      /* idle_bound, the host the larger part of that idle time (MB_PC_HOST) */
    bool queued_bound;    /* idle_bound, kernel wait the larger part (MB_PC_QUEUED) */
    bool comm_bound;      /* communication between the ranks does (and the GPU's idle time does not) */
    double here_comm_on_host; /* of here_cls[MB_PC_COMM], the collectives that ran on the host (gloo, MPI) */
    double here_setup;    /* of here_cls[MB_PC_HOST], a trace's allocation and set-up calls (its step table's
                             "setup" part, seconds a step): paid once in a trace of the loop's start */
    bool no_dataloader;   /* a trace without DataLoader annotations: no "more DataLoader workers" */
    bool no_optimizer;    /* a trace without Optimizer.step: no "fused optimizers" */
    bool nothing_scaled;  /* per-stage model: no stage of the run has a ceiling here, so every row keeps its step */
    char verdict[2048];   /* the answer in one sentence: cheapest and fastest, or that no GPU helps */
} mb_ranking;

/* Whether --target asks for the ranking (a list or `all`) rather than one machine. */
bool mb_rank_wanted(const char *targets, const mb_run *run);

/* A GPU run whose GPU activity its trace did not record (trace_cpu.c,
 * step.gpus_unrecorded: deviceProperties, or ops only a GPU runs): its ops'
 * times are the host's launching them, and neither a host CPU nor a GPU's
 * figures can take them anywhere: no projection, MB_GPUS_UNRECORDED says
 * why. */
bool mb_rank_gpus_unrecorded(const mb_run *run);
#define MB_GPUS_UNRECORDED                                                                                          \
    "--target: the trace recorded no GPU activity, though it says a GPU was used (deviceProperties lists one, or " \
    "ops only a GPU runs, aten::cudnn_*, ran): its ops' times are the host's launching them, which no machine's "   \
    "figures project; profile again with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and project "     \
    "that trace"

/* The refusal of --host-ms for a run projected stage by stage (gap's CLI
 * before ranking, the ranking when it falls back to the stage model). */
#define MB_HOST_MS_NEEDS_KERNELS                                                                              \
    "--host-ms goes with a PyTorch trace of a loop whose host runs ahead of its GPU (the kernel-level model); " \
    "this run is projected stage by stage"

/* Builds the ranking of `run` (read from run_path) against `here` (the
 * ceilings of the machine that ran it). MB_EUSAGE on an unknown target, a
 * malformed price, or a price naming no machine of the ranking. */
int mb_rank_build(const char *run_path, const mb_run *run, const mb_ceilings *here, const mb_ini *matching,
                  const mb_rank_opts *o, mb_ranking *out, mb_err *err);
void mb_rank_free(mb_ranking *r);

/* Text (table or md, 120 columns) and JSON of the ranking. */
int mb_rank_text(const mb_ranking *r, bool md, char **text, mb_err *err);
cJSON *mb_rank_json(const mb_ranking *r);
/* The HTML section: one stacked bar per machine, the notes. */
void mb_rank_html(FILE *o, const mb_ranking *r);

/* The measured error of the kernel-level projection of a step: mean
 * absolute % error over the 266 projections of 70 (workload, GPU) runs of
 * NeuSight's paired public measurements on 8 GPUs (bench/project_validate,
 * docs/gap.md), with datasheet figures and with measured ceilings, each
 * projection onto a GPU made without that GPU's data (--leave-one-out; the
 * model fits nothing to these data, so these are its in-sample figures too);
 * and over the 86 of them that involve the P100 or the P4, the two GPUs added
 * after the model was written (held out: nothing of the model was chosen on
 * them). ctest runs project_validate with these values (--expect): they are
 * what it measures, to 0.1. */
#define MB_RANK_EXPECTED_ERROR_DATASHEET_PCT 22.0
#define MB_RANK_EXPECTED_ERROR_MEASURED_PCT 16.9
#define MB_RANK_HELD_OUT_ERROR_DATASHEET_PCT 29.5
#define MB_RANK_HELD_OUT_ERROR_MEASURED_PCT 24.8
/* The same error between two GPUs of one architecture, measured by this
 * project: the 14 projections (both ways, 7 training steps) of
 * `scripts/gpu_pair.py compare` on bench/data/pair-h100-h200-gpubound and
 * -gpubound2 (an H100 and an H200: the same tensor cores, 1.4x the
 * bandwidth). tests/gpu_pair.sh holds these to what compare prints, to 0.1
 * (3.5 and 2.6 before the loss and embedding ops had byte models, 3.4 and 2.5
 * before aten::cat's and the foreach ops' element sizes). */
#define MB_RANK_PAIR_ERROR_DATASHEET_PCT 3.1
#define MB_RANK_PAIR_ERROR_MEASURED_PCT 2.4
#define MB_RANK_PAIR_PROJECTIONS 14

/* A --step-ms within this share of the trace's GPU step (cut on the GPU's
 * timeline) is that step: the loop was GPU-bound without the profiler too,
 * and its host's time is not known beyond "at most the step" (the figures of
 * bench/data/pair-h100-h200-nosync: 0.02-0.23% apart). */
#define MB_RANK_GPU_BOUND_SHARE 0.05

#endif
