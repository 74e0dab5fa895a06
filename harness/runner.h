/* runner.h: runs the cases of a suite, one at a time, through the ops table
 * and Google Benchmark, and journals each record as it finishes. */
#ifndef MB_RUNNER_H
#define MB_RUNNER_H

#include <stdbool.h>

#include "results.h"
#include "suite.h"

typedef struct mb_runner_opts {
    int repetitions;    /* > 0 overrides the job files */
    double min_time;    /* > 0 overrides the job files */
    double warmup_time; /* >= 0 overrides the job files; < 0 keeps them */
    bool quiet;         /* no progress on stderr */
    double fleet_margin; /* fleet mode: flag ranks this far below the median (0.10) */
    double dist_timeout; /* seconds a rank waits for the others before giving up */
} mb_runner_opts;

typedef struct mb_run_summary {
    int ok, skipped, failed;
} mb_run_summary;

/* Default fixed iteration count for collective cases (same on every rank). */
#define MB_DEFAULT_COLLECTIVE_ITERATIONS 20

/* Runs one case into r (status, timing, verification, report). Never fails
 * as a whole: every problem becomes the record's status and reason. */
void mb_run_case(const mb_case *c, const mb_runner_opts *o, mb_record *r);

/* Runs every case; appends each record to the journal (rank 0 only under
 * MPI, with every rank's records merged). Returns MB_OK, or an error when the
 * journal could not be written (results already written stay). */
int mb_run_suite(const mb_suite *s, const mb_runner_opts *o, mb_journal *j, mb_run_summary *sum,
                 mb_err *err);

#endif
