/* gap.h: the gap model. A run's stages next to the ceilings measured on a
 * machine: which case each stage is matched to and why, the measured rate
 * against the ceiling, the time lost, the ranking, the Amdahl projections,
 * and optionally the projection onto another machine (its results file or a
 * datasheet). Reads no files itself: the CLI loads the run, the results and
 * the configs and hands them in. The arithmetic is formulas.h. */
#ifndef MB_GAP_H
#define MB_GAP_H

#include <stdbool.h>

#include "ceilings.h"
#include "gapconfig.h"
#include "hardware.h"
#include "mb.h"
#include "stages.h"

#define MB_GAP_WHY_LEN 768

/* Canonical dtype name (fp64, fp32, tf32, fp16, bf16, fp8, int8) for the
 * usual spellings (float, half, bfloat16, float16, double, ...); NULL if unknown. */
const char *mb_dtype_canonical(const char *dtype);

/* Picks the case of `res` that is the ceiling for stage `s`: same component
 * (matching.ini [components]), same device, compatible work unit, the same
 * direction/pattern, then the nearest dtype, pinned-ness, ranks and size
 * per call. Returns the case index, or -1 with the reason in why ("no
 * ceiling: ..."). why also says why the chosen case was chosen. */
int mb_gap_match(const mb_stage *s, const mb_ceilings *res, const mb_ini *matching, char *why, size_t len);

/* The ceiling rate of case c for the stage's work unit, in stage work units
 * per second (disk cases counted in I/Os convert by their block size). 0 when
 * the units cannot be converted. */
double mb_gap_case_rate(const mb_stage *s, const mb_case_ref *c, const mb_ini *matching);

typedef struct mb_gap_stage {
    const mb_stage *stage;
    int match;              /* case index in the ceilings, -1 = no ceiling */
    char why[MB_GAP_WHY_LEN];
    double measured_rate;   /* work / seconds (stage work units per second) */
    double ceiling_rate;    /* 0 without a ceiling */
    double efficiency;      /* measured / ceiling (mb_efficiency) */
    double time_at_ceiling; /* run total: work / ceiling (= seconds without a ceiling) */
    double exposed;         /* run total: the stage's exposed seconds (mb_stage_exposed) */
    double time_lost;       /* run total: (seconds - time at ceiling) x exposed / seconds, >= 0 */
    bool above_ceiling;     /* measured faster than the matched ceiling */
    bool by_bytes;          /* held to its bytes at the memory ceiling ([roofline]: memory-bound products) */
    /* Faster than the matched case by more than matching.ini's
     * [above_ceiling] margin: the case is no ceiling for the stage (another
     * size, shape or cache); what every view says of it, "" otherwise.
     * Such a stage counts as one without a ceiling (mb_gap_stage_bounded). */
    char beyond[MB_GAP_WHY_LEN];
    /* Syncs the GPU never idled in (all their time waited for queued work):
     * no rate or efficiency to show; beyond says so. */
    bool hidden;
    double share;           /* exposed seconds / run total */
    double amdahl_total;    /* run total if this stage alone reached its ceiling */
    double amdahl_speedup;
    /* projection onto a target (when mb_gap.has_target) */
    bool projected;
    double target_seconds;  /* run total there (= seconds when not projected) */
    double target_rate;     /* the target's ceiling (results) or scaled peak (datasheet), work/s */
    int target_match;       /* case index in the target results, -1 */
    const char *target_source; /* "measured" | "datasheet": what target_rate is; NULL when kept */
    char target_why[MB_GAP_WHY_LEN];
    /* Without a ceiling: what would bound the stage ("bytes read not
     * recorded: ..."), for the headline; "" when it has one. */
    char bound_hint[MB_GAP_WHY_LEN];
} mb_gap_stage;

/* The stage has a ceiling that holds it: a matched case it does not beat
 * by more than the margin. */
bool mb_gap_stage_bounded(const mb_gap_stage *st);

typedef struct mb_gap {
    const mb_run *run;
    const mb_ceilings *ceilings;
    mb_gap_stage *stages;
    int n;
    int *ranking;          /* stage indices by time lost, largest first */
    int steps;             /* run steps (1 when unknown: the run is one "step") */
    bool steps_known;
    double total;          /* run wall time (mb_run.total_seconds, else sum of stages) */
    double stage_sum;      /* sum of stage exposed seconds */
    double unaccounted;    /* total - stage_sum when positive: time in no stage */
    double all_total;      /* run total if every stage reached its ceiling */
    double all_speedup;
    int bottleneck;        /* stage with the largest share */
    char **notes;          /* remarks on the model's validity (overlapping stages) */
    int n_notes;
    /* projection */
    bool has_target;
    char *target_label;    /* host/file of the target results, or the datasheet name */
    char *target_kind;     /* "results" | "datasheet" | "reference" */
    double target_total;
    int target_bottleneck;
    char **assumptions;
    int n_assumptions;
    /* The headline: every stage by exposed time, largest first, with or
     * without a ceiling (what dominates the step comes first). */
    int *headline;
    double bounded_share;  /* exposed time of the stages with a ceiling / run total */
    bool no_gpu_ceilings;  /* GPU stages, and the ceilings hold no usable GPU case */
    /* A simplify loader read-amplified (simplify.data_loading.amplified):
     * the bytes its batches hold, read an item at a time at its pattern, at
     * this machine's disk ceiling (the disk case matched for those reads);
     * needed_seconds 0 when not known. Said in the diagnosis. */
    double needed_seconds;  /* run total */
    double needed_block;    /* bytes an item */
    int needed_case;        /* case index in the ceilings, -1 */
    int needed_workers;     /* the loader's workers, each reading one at a time (0: in the step's process) */
    bool needed_queued;     /* no case of reads one at a time: the best case's, deeper than the loader reads */
    bool needed_faults;     /* a memory map's page faults (the mmap backend's case), not calls of an item */
    bool needed_capped;     /* the workers' reads one at a time together pass the disk's best: held to it */
    int needed_stage;       /* the data-loading stage it is about, -1 */
    /* the ranking of machines (project_rank.c), written after the projection
     * when set; owned by the caller, not freed by mb_gap_free */
    const char *projection_text;
    const cJSON *projection_json;
    const struct mb_ranking *machines; /* for the HTML page */
} mb_gap;

/* Builds the gap of `run` against `ceilings`. */
int mb_gap_build(const mb_run *run, const mb_ceilings *ceilings, const mb_ini *matching, mb_gap *out,
                 mb_err *err);
/* Adds the projection onto another machine's measured results. */
int mb_gap_project_results(mb_gap *g, const mb_ceilings *target, const mb_ini *matching, mb_err *err);
/* Adds the projection onto a datasheet: the target's peak x (here's ceiling
 * / here's peak) x here's efficiency. `target_is_gpu` says what the
 * datasheet describes (its [product] kind). MB_EUSAGE onto a GPU's when
 * the run is a CPU run (mb_gap_onto_host). */
int mb_gap_project_datasheet(mb_gap *g, const mb_datasheet *d, bool target_is_gpu, mb_err *err);
/* The share of the step (exposed time) that is compute on the host CPU:
 * GEMM, convolution, attention and memory-bound stages of device cpu (a
 * trace's memory-bound CPU ops; a stage file's hostmem stage is a loader),
 * and the model's other ops (role compute: a trace's "other aten ops",
 * simplify's "fwd+bwd: other ops"), which a GPU would run instead, at a speed a CPU
 * run cannot tell; `names`
 * (may be NULL) lists those stages. */
double mb_gap_host_compute(const mb_gap *g, char *names, size_t len);
/* From this share of the step on, a run is a CPU run for --target: no GPU datasheet takes it, a measured
 * machine takes it onto its host CPU. */
#define MB_GAP_HOST_COMPUTE_MIN 0.5
/* ... and from this one for a run with no stage on a GPU: all its compute is
 * the CPU's, which a GPU would take over, and a datasheet that keeps it as it
 * is says "1.00x" and "no GPU helps" (pytorch/examples' vae, its loader 67%
 * of the step, its CPU compute 22%). Below it, a GPU's gain is within the
 * model's error. */
#define MB_GAP_HOST_COMPUTE_MIN_CPU_RUN 0.1
/* Whether the run is a CPU run for --target (the two thresholds above). */
bool mb_gap_onto_host(const mb_gap *g);
/* The sentence that says why a GPU datasheet cannot take such a run, and what to do. */
void mb_gap_host_compute_why(const mb_gap *g, char *buf, size_t len);
/* Adds the projection onto a reference machine (reference.h): its measured
 * results where a stage matches a usable case, else the datasheet `d` (may be
 * NULL); each stage says which in target_source. */
int mb_gap_project_reference(mb_gap *g, const char *label, const mb_ceilings *measured, const mb_datasheet *d,
                             const mb_ini *matching, mb_err *err);
void mb_gap_free(mb_gap *g);

/* Three levels of a stage from a simplify run (stage file version 2,
 * docs/simplify.md): the hardware ceiling, the part run alone, the part in
 * the full loop, all as run-total seconds for the stage's work, and which gap
 * is which. has_levels false: the stage has no isolated time. */
typedef enum mb_gap_verdict {
    MB_VERDICT_NONE = 0,     /* no isolated time */
    MB_VERDICT_HIDDEN,       /* the step hardly waits for it: overlapped */
    MB_VERDICT_PIPELINE,     /* alone it is much faster than in the loop */
    MB_VERDICT_ITSELF,       /* alone it is already far from its ceiling */
    MB_VERDICT_AT_CEILING,   /* alone and in the loop near the ceiling */
    MB_VERDICT_AS_ALONE,     /* in the loop as fast as alone; no ceiling to say more */
    MB_VERDICT_UNSTEADY,     /* alone slower than in the loop: the isolated figure is not to be trusted */
    MB_VERDICT_NEGLIGIBLE,   /* the step waits for it less than 1% of its time: no gap worth acting on */
    MB_VERDICT_LITTLE_WAITED, /* slower in the loop than alone, but so little of it waited for that no gap holds */
} mb_gap_verdict;

typedef struct mb_gap_levels {
    bool has_levels;
    bool has_ceiling;
    double ceiling_seconds;  /* work at the ceiling rate (time_at_ceiling) */
    double isolated_seconds; /* the part alone */
    double loop_seconds;     /* the part in the full loop (stage seconds) */
    double isolated_rate, loop_rate; /* work units / s; 0 for time-only stages */
    double self_gap;         /* isolated - ceiling seconds (0 without a ceiling) */
    double pipeline_gap;     /* loop - isolated seconds, scaled by the exposed share */
    /* The part did other work alone (isolated_bytes: a loader whose loop the
     * page cache served more), more than the tolerance from the loop's: the
     * loop's work at the rate alone, which the gaps and the verdict compare
     * instead of isolated_seconds. */
    bool other_work;
    double alone_for_loop_seconds;
    mb_gap_verdict verdict;
    const char *verdict_text; /* "slow by itself", "slow only in the pipeline", ... */
} mb_gap_levels;

/* One sentence on a stage whose part did other work alone (other_work), for
 * under the levels table in every view: false (buf empty) otherwise. */
bool mb_gap_levels_work_note(const mb_gap *g, int i, const mb_gap_levels *L, char *buf, size_t len);

/* The tolerance every view (text, JSON, HTML) gives mb_gap_stage_levels. */
#define MB_LEVELS_TOLERANCE 0.10

/* The levels of stage i of the gap; a gap within `tolerance` (a fraction,
 * e.g. 0.10) of the slower level is not called a gap. */
mb_gap_levels mb_gap_stage_levels(const mb_gap *g, int i, double tolerance);
/* Whether any stage of the run carries an isolated time. */
bool mb_gap_has_levels(const mb_gap *g);
/* The verdicts' legend, the same words in the text and the page. */
void mb_gap_levels_legend(char *buf, size_t len);

/* Per-step view of a run-total figure. */
static inline double mb_gap_per_step(const mb_gap *g, double run_total)
{
    return run_total / (g->steps > 0 ? g->steps : 1);
}

#endif
