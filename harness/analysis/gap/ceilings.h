/* ceilings.h: a results file (results/README.md, schema_version 1 or 2) as the
 * analysis reads it: the cases with their rates in absolute units, and
 * whether each one may serve as a ceiling (status ok AND verification
 * passed — a fast wrong number is no ceiling). */
#ifndef MB_CEILINGS_H
#define MB_CEILINGS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "mb.h"

typedef struct mb_case_ref {
    const char *id;        /* component/backend/params */
    const char *component;
    const char *backend;
    const cJSON *params;   /* object of text values (may be NULL) */
    const char *status;    /* ok | skipped | failed */
    const char *verification; /* passed | failed | not-run | NULL */
    const char *reason;    /* why skipped/failed, or NULL */
    bool usable;           /* a ceiling: status ok and verification passed, rate > 0 */
    bool noisy;            /* a doubtful ceiling by results.h's mb_noise_judge (cv above max_cv, or its
                              median, burst and sustained disagree beyond its own noise) */
    char noise[384];       /* why it is noisy ("noisy: …"), empty when not */
    double cv;             /* rate.cv, NAN when absent */
    const char *work_unit;
    const char *rate_unit;
    double rate_scale;
    bool latency_first;
    double work_per_iter;
    double rate;           /* the ceiling in rate_unit (0 when none): the case's "ceiling" (older
                              files: the `phase` rate), or the phase --ceiling names */
    const char *phase;     /* where it came from: "median" (rate.median), "burst" or "sustained" */
    double rate_median;    /* rate.median: the repetitions' median */
    double rate_burst;     /* burst.rate of a compute case (0 when none) */
    double rate_sustained; /* sustained.rate of a compute case (0 when none) */
    double rate_abs;       /* rate * rate_scale: work units per second */
    double peak;           /* peak.value in rate_unit; 0 = none */
    const char *peak_source;
    const char *device;    /* "gpu" | "cpu" (configs/gap/matching.ini [devices]) */
    const cJSON *json;     /* the whole case object (info, metrics, notes) */
    char label[192];       /* mb_case_label: the parameters its job file set */
} mb_case_ref;

typedef struct mb_ceilings {
    char *path;
    char *label;             /* shown instead of host/file when set (a reference machine's) */
    cJSON *root;
    const char *host;        /* context.host.name, or NULL */
    const char *started_utc;
    const cJSON *context;
    mb_case_ref *cases;
    int n_cases;
    char machine[160];       /* what the machine is: "8x GPU model", else the CPU model */
} mb_ceilings;

/* Reads a results file (schema and version checked by results.c's
 * mb_results_load) and checks every case: MB_EUSAGE with the file and JSON
 * path (`cases[3].rate.median`) on anything malformed. Device classes come
 * from configs/gap/matching.ini. */
int mb_ceilings_load(const char *path, mb_ceilings *out, mb_err *err);
/* The same from a results document already read (and checked by
 * mb_results_load); takes ownership of root, also on failure. `path` names it
 * in messages. */
int mb_ceilings_from_json(cJSON *root, const char *path, mb_ceilings *out, mb_err *err);
void mb_ceilings_free(mb_ceilings *r);

/* The newest results/<host>-*.json under `dir` by started_utc, into path.
 * MB_EUSAGE saying how to make one when there is none. */
int mb_ceilings_find_newest(const char *dir, const char *host, char *path, size_t len, mb_err *err);

/* Which rate of the compute cases serves as their ceiling: "burst" or
 * "sustained" (what a long run gets: the default, as ceiling_phase in the
 * file says). Cases without that phase keep rate.median. MB_EUSAGE on
 * another name. */
int mb_ceilings_use_phase(mb_ceilings *r, const char *phase, mb_err *err);

/* What the machine is, for one machine alone: its label when set (a
 * reference machine's), else its GPU model with the count ("8x NVIDIA H100
 * 80GB HBM3"), else its CPU model, else the host name, else the file name. */
const char *mb_ceilings_label(const mb_ceilings *r);

/* Labels that tell n machines apart (labels[i], allocated, free each):
 * the machine (mb_ceilings_label); then " @ host" for machines whose
 * machine ties; then " (file name)", the path, its position where those still tie.
 * overrides: "NAME=FILE" strings (FILE: a file's path or name) setting a
 * label outright. MB_EUSAGE on a malformed override, one that fits no file,
 * or two overrides giving two machines one label. */
int mb_machine_labels(const mb_ceilings *m, int n, const char *const *overrides, int n_over, char **labels,
                      mb_err *err);

/* A parameter value of a case as text (NULL when absent). */
const char *mb_case_param(const mb_case_ref *c, const char *name);

#endif
