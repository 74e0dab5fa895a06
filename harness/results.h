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

#include "report.h"
#include "suite.h"

#define MB_RESULTS_SCHEMA "mlbench-results"
#define MB_RESULTS_SCHEMA_VERSION 1

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
/* Flags an ok case whose repetitions' rates vary more than c->max_cv allows
 * (cv > max_cv, 2 or more repetitions) as noisy, with a note saying why.
 * Returns r->noisy. */
bool mb_record_check_noise(mb_record *r);
const char *mb_case_status_name(mb_case_status s);
cJSON *mb_record_to_json(const mb_record *r);

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

/* Writes text to path atomically: path.tmp.PID, fsync, rename, fsync dir. */
int mb_write_file_atomic(const char *path, const char *text, mb_err *err);

/* mb_journal_open on the default path, results/<host>-<UTC time>[-N].json
 * under the current directory (creating results/): the first free name,
 * claimed atomically, so runs started at once never share a file. Takes
 * ownership of context in every case. */
int mb_journal_open_default(mb_journal *j, const char *suite, int argc, char **argv, cJSON *context,
                            mb_err *err);

/* Reads a results file and checks schema and version: MB_EUSAGE with the
 * file and what was wrong. */
int mb_results_load(const char *path, cJSON **out, mb_err *err);

#endif
