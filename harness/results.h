/* results.h: case records and the results file (schema: results/README.md).
 *
 * The runner fills an mb_record per case; mb_record_to_json turns it into the
 * schema's case object. The journal holds the whole results document and
 * rewrites it atomically (temporary file, fsync, rename, fsync of the
 * directory) after every case, so a killed run leaves a valid file. */
#ifndef MB_RESULTS_H
#define MB_RESULTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "case_report.h"
#include "suite.h"

#define MB_RESULTS_SCHEMA "mlbench-results"
/* 2: every case has one "ceiling" {value, unit, source}; "efficiency" is
 * ceiling / peak; "noisy" also covers phases that disagree (mb_noise_judge).
 * Files of version 1 still read: their ceiling is derived by the same rule. */
#define MB_RESULTS_SCHEMA_VERSION 2
#define MB_RESULTS_SCHEMA_VERSION_MIN 1

typedef enum mb_case_status { MB_CASE_OK, MB_CASE_SKIPPED, MB_CASE_FAILED } mb_case_status;
typedef enum mb_verify_status { MB_VERIFY_NOT_RUN, MB_VERIFY_PASSED, MB_VERIFY_FAILED } mb_verify_status;

typedef struct mb_record {
    const mb_case *c;
    mb_case_status status;
    char reason[MB_ERR_LEN];
    double work_per_iter;
    int repetitions;        /* repetitions completed */
    long long *rep_iterations;
    double *rep_seconds;    /* timed seconds in total per repetition */
    mb_verify_status verify;
    char verify_detail[MB_ERR_LEN];
    bool noisy;             /* ok, but the rates' cv exceeds the case's max_cv */
    mb_report report;
    /* Compute cases (ops->compute): the burst and sustained phases. */
    mb_phase_result burst, sustained;
    char burst_reasons[256], sustained_reasons[256]; /* clock-event reasons as text */
} mb_record;

/* Per-record statistics (derived; see results/README.md). */
typedef struct mb_stats {
    double spi_median, spi_min, spi_mean, spi_stddev; /* seconds per iteration */
    double rate_median, rate_best, rate_mean, rate_cv; /* in the rate unit */
} mb_stats;

void mb_record_init(mb_record *r, const mb_case *c);
void mb_record_free(mb_record *r);
int mb_record_add_repetition(mb_record *r, long long iterations, double seconds);
/* False when there is nothing to compute (no repetition, zero time). */
bool mb_record_stats(const mb_record *r, mb_stats *out);
/* Flags an ok case as noisy by mb_noise_judge (its cv above c->max_cv, or
 * its burst, sustained and median disagreeing beyond the case's own noise),
 * with a note saying why. Call after the phases. Returns r->noisy. */
bool mb_record_check_noise(mb_record *r);
const char *mb_case_status_name(mb_case_status s);
cJSON *mb_record_to_json(const mb_record *r);
/* The record's ceiling in its rate unit (sustained phase where measured,
 * else the repetitions' median) and its source; NAN when there is none. */
double mb_record_ceiling(const mb_record *r, const char **source);

/* ---- the results document and its journal -------------------------------- */

typedef struct mb_journal {
    char *path;
    cJSON *doc;
    bool written; /* the file exists: at least one write succeeded */
} mb_journal;

/* Builds the document (schema, version, context, suite, command line) and
 * writes it once, so even an early crash leaves a valid (empty) file. */
int mb_journal_open(mb_journal *j, const char *path, const char *suite, int argc, char **argv,
                    cJSON *context, mb_err *err);
/* Appends a case object (ownership moves to the journal) and rewrites. */
int mb_journal_append(mb_journal *j, cJSON *case_json, mb_err *err);
/* Marks the run complete (status, finish time) and rewrites. */
int mb_journal_finish(mb_journal *j, mb_err *err);
void mb_journal_close(mb_journal *j);


/* mb_journal_open on the default path, results/<host>-<UTC time>[-N].json
 * under the current directory (creating results/): the first free name,
 * claimed atomically, so runs started at once never share a file. Takes
 * ownership of context in every case. */
int mb_journal_open_default(mb_journal *j, const char *suite, int argc, char **argv, cJSON *context,
                            mb_err *err);

/* Reads a results file and checks schema and version: MB_EUSAGE with the
 * file and what was wrong. */
int mb_results_load(const char *path, cJSON **out, mb_err *err);

/* A run stopped halfway (a limit, a signal, a crash) leaves a valid file whose
 * "status" is not "complete": false for a finished run, else true and `what`
 * holds the sentence every view says it with. */
bool mb_results_unfinished(const cJSON *doc, char *what, size_t len);

/* The GPU a run benchmarked, from a results file's context: the entry of
 * context.gpus marked benchmark_device, else the first; NULL without one. */
const cJSON *mb_results_benchmark_gpu(const cJSON *context);


/* ---- one ceiling per case (results/README.md, "The ceiling") --------------- */

/* A case's noise allowance: the measurements of one case may differ by
 * max(MB_NOISE_K x cv, MB_NOISE_FLOOR) of the smaller before it is noisy. */
#define MB_NOISE_K 3.0
#define MB_NOISE_FLOOR 0.05

typedef struct mb_noise_in {
    double cv;        /* the repetitions' rate cv (NAN: unknown) */
    double max_cv;    /* the job file's max_cv (0: no check) */
    int repetitions;
    double median;    /* rate.median; <= 0 or NAN: not measured */
    double burst;     /* burst.rate (compute cases) */
    double sustained; /* sustained.rate (compute cases) */
    double sustained_cv;   /* sustained.sub_cv: its sub-windows' spread (NAN: not measured, a file from before) */
    int sustained_windows; /* sustained.sub_windows (0: none) */
} mb_noise_in;

/* The noise rule, one place for the run and every reader. A case is noisy
 * when (1) its repetitions' cv exceeds max_cv, (2) its sustained rate and
 * its repetitions' median (both back-to-back work) differ by more than the
 * allowance, or (3) its sustained rate is above its burst rate by more than
 * the allowance (a long run cannot beat a short one: that is noise). Burst
 * above sustained is not noise: clocks that drop under load (a GPU at its
 * power cap) make it real. A compute case whose sustained phase has
 * sub-windows (3 or more) is judged on the steady state its ceiling is taken
 * in too: (1) also with the sub-windows' cv, no (2) (the repetitions ran
 * while the clock settled), (3) with the sub-windows' allowance. why (may
 * be NULL) gets "noisy: …" saying which. */
bool mb_noise_judge(const mb_noise_in *in, char *why, size_t len);
/* For a case judged on its steady state: true (and why) when the
 * repetitions' median is further from the sustained rate than the steady
 * state's noise allows, which says the repetitions ran while the clock
 * settled: a note, not noise. */
bool mb_noise_settling(const mb_noise_in *in, char *why, size_t len);
double mb_noise_allowance(double cv);

typedef struct mb_ceiling {
    double value;       /* in unit; NAN: the case has no ceiling (skipped, failed, no rate) */
    const char *unit;   /* rate_unit ("" when absent) */
    const char *source; /* "sustained" (compute cases' sustained phase) or "median" (of the repetitions) */
    double efficiency;  /* value / peak.value; NAN without a peak */
    bool noisy;         /* the "noisy" field, or mb_noise_judge on the case's numbers */
    char why[384];      /* the noise rule's reason when noisy */
} mb_ceiling;

/* A case object's ceiling: its "ceiling" object (schema 2), or for older
 * files the same rule applied to its numbers (sustained.rate where measured,
 * else rate.median; status ok only). max_cv absent (files from before it)
 * counts as MB_DEFAULT_MAX_CV. Returns true when value is a number. */
bool mb_case_ceiling(const cJSON *c, mb_ceiling *out);

/* A case's state, worded once for every view: "ok", "noisy" (ok and
 * verified, but not a reliable ceiling), "not verified" (ok, verification
 * not run), "failed", "skipped". */
const char *mb_case_state(const cJSON *c);

/* A copy of a results document in the current schema version: each case
 * with its "ceiling" (derived for older files), "efficiency" = ceiling /
 * peak, and "noisy" by mb_noise_judge (with its note). NULL: out of memory. */
cJSON *mb_results_current(const cJSON *doc);

#endif
