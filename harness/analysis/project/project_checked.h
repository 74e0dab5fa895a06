/* project_checked.h: how far the kernel-level projection has been from what
 * a target GPU measured - the `checked` column of `mlbench gap --target` -
 * read from configs/gap/projection_error.ini:
 *
 *   [datasheet], [measured]   NeuSight's public paired data, across
 *       architectures: the mean absolute % error of the projected steps onto
 *       the GPU, each made by a model fitted without that GPU's data
 *       (`bench/project_validate --leave-one-out --per-target`), and how many
 *   [pairs.datasheet], [pairs.measured]   this project's own pairs (an H100
 *       and an H200: `scripts/gpu_pair.py compare --per-target`):
 *       "mean count from[,from]", from = the GPUs projected from
 *
 * CI holds both to the commands that measure them (ctest
 * project_validate_per_target*, gpu_pair). Which figure a row shows, in its
 * mode (datasheet or measured figures):
 *   1. the pairs' figure when the trace ran on a GPU they projected from:
 *      the same source and target kinds as measured (H100 -> H200);
 *   2. else the public data's figure (projections from other architectures);
 *   3. else the pairs' figure from another GPU of the architecture of the
 *      trace's GPU (an H100 NVL's trace onto the H200): checked from that
 *      GPU only, and the row says so (basis "pairs", `from`);
 *   4. else never checked, for this trace: the pairs measured no projection
 *      across architectures, so from another architecture's GPU (or an
 *      unknown one) their figure is only said beside the row (pairs_pct,
 *      pairs_n, `from`). The nearest checked class is then named: the
 *      checked GPUs of its architecture (the first word of gpu-arch.ini's
 *      name for its [gpu] compute_capability: Hopper, Ampere, Ada), with the
 *      highest of their figures by rules 1-3, so that a machine nobody
 *      checked is not shown as more certain than the worst-checked machine
 *      of its class. An architecture none of whose GPUs was checked
 *      (Blackwell) has no class: another architecture's figure says nothing
 *      of it, and the note says none was checked, with the figure the
 *      ranking allows the row (its mode's expected error). */
#ifndef MB_PROJECT_CHECKED_H
#define MB_PROJECT_CHECKED_H

#include <stdbool.h>
#include <stddef.h>

#include "gapconfig.h"
#include "mb.h"

typedef struct mb_checked {
    double pct;          /* mean absolute % error of the projected steps onto the GPU */
    long n;              /* projections; 0 = never checked */
    char basis[16];      /* "public" (rule 2) | "pairs" (rules 1, 3) | "" */
    char from[64];       /* pairs: the datasheet stems projected from ("h100-sxm") */
    double pairs_pct;    /* n = 0: the pairs' figure from `from`, another architecture than the trace's GPU */
    long pairs_n;        /* its projections; 0 = no pairs line */
    char here_arch[32];  /* pairs_n > 0: the architecture of the trace's GPU ("Volta"); "" unknown */
    bool from_here;      /* pairs: the trace ran on one of them (rule 1) */
    char nearest[200];   /* n = 0: the nearest checked class, "H100 SXM5 80GB, H200 SXM 141GB (Hopper)"; "" none */
    double nearest_pct;  /* the highest checked figure among them */
    char arch[32];       /* n = 0: the target's architecture ("Blackwell"); "" unknown */
} mb_checked;

/* The figure of the target (datasheet stem) in `mode` ("datasheet" or
 * "measured") for a trace that ran on here_stem (NULL or "": unknown), by
 * the rules above. errors NULL: never checked, no class. MB_EUSAGE naming
 * the file, section and key on a malformed line. */
int mb_checked_find(const mb_ini *errors, const char *mode, const char *target_stem, const char *here_stem,
                    mb_checked *out, mb_err *err);

/* The notes a ranking (project_rank.h) adds about its rows' `checked`, in
 * *notes (n_notes of them, each malloc'ed; free both): per row shown with a
 * pairs figure, from where; per nearest checked class, the machines never
 * checked that it stands for. */
struct mb_rank_row;
int mb_checked_notes(const struct mb_rank_row *rows, int n, char ***notes, int *n_notes, mb_err *err);

/* The architecture of a GPU datasheet (stem) for the rule above: the first
 * word of gpu-arch.ini's name of its compute capability ("Hopper"), else of
 * the same major version's first section ("sm_103" -> sm_100's), else
 * "sm_<major>x"; *cc its compute capability. False when the datasheet or
 * its [gpu] compute_capability is missing. */
bool mb_checked_arch(const char *stem, char *arch, size_t len, double *cc);

#endif
