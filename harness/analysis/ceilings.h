/* ceilings.h: a results file (results/README.md, schema_version 1) as the
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
    bool noisy;            /* its repetitions varied more than max_cv: a doubtful ceiling */
    double cv;             /* rate.cv, NAN when absent */
    const char *work_unit;
    const char *rate_unit;
    double rate_scale;
    bool latency_first;
    double work_per_iter;
    double rate;           /* rate.median in rate_unit (0 when none) */
    double rate_abs;       /* rate * rate_scale: work units per second */
    double peak;           /* peak.value in rate_unit; 0 = none */
    const char *peak_source;
    const char *device;    /* "gpu" | "cpu" (configs/gap/matching.ini [devices]) */
    const cJSON *json;     /* the whole case object (info, metrics, notes) */
} mb_case_ref;

typedef struct mb_ceilings {
    char *path;
    cJSON *root;
    const char *host;        /* context.host.name, or NULL */
    const char *started_utc;
    const cJSON *context;
    mb_case_ref *cases;
    int n_cases;
} mb_ceilings;

/* Reads a results file (schema and version checked by results.c's
 * mb_results_load) and checks every case: MB_EUSAGE with the file and JSON
 * path (`cases[3].rate.median`) on anything malformed. Device classes come
 * from configs/gap/matching.ini. */
int mb_ceilings_load(const char *path, mb_ceilings *out, mb_err *err);
void mb_ceilings_free(mb_ceilings *r);

/* The newest results/<host>-*.json under `dir` by started_utc, into path.
 * MB_EUSAGE saying how to make one when there is none. */
int mb_ceilings_find_newest(const char *dir, const char *host, char *path, size_t len, mb_err *err);

/* A short machine name for columns: host name, else the file's stem. */
const char *mb_ceilings_label(const mb_ceilings *r);

/* A parameter value of a case as text (NULL when absent). */
const char *mb_case_param(const mb_case_ref *c, const char *name);

#endif
