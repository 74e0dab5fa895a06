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
    double sync_share;         /* stages: sync stage time; trace: GPU idle while the host waits in
                                  syncs/blocking copies */
    double sync_host_share;    /* trace: host time in sync calls and blocking copies; -1 otherwise */
    double syncs;
    double data_share;         /* data loading: disk stages, stages named like loading, DataLoader */
    double copy_share;         /* host<->device copies */
    double pageable_share;     /* ... of them from pageable memory */
    double comm_share;         /* collectives */
    double cpu_share;          /* compute stages marked "device": "cpu" */
    bool random_disk;          /* a data stage reads at random offsets */
    bool fp32_compute;         /* GEMM/conv time in fp32 or tf32 */
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

typedef struct mb_diagnosis {
    mb_diag_figures fig;
    mb_finding *findings;
    int n;
} mb_diagnosis;

/* MB_EUSAGE naming the file and key when a threshold is missing. */
int mb_diagnose(const mb_gap *g, const mb_ini *thresholds, const mb_ini *remedies, mb_diagnosis *out,
                mb_err *err);
void mb_diagnosis_free(mb_diagnosis *d);

/* Figures only (used by mb_diagnose; exposed for tests). */
void mb_diag_figures_compute(const mb_gap *g, const mb_ini *thresholds, mb_diag_figures *f);

#endif
