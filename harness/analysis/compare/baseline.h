/* baseline.h: a run checked against an earlier results file (`--baseline
 * FILE --tolerance 0.10`), e.g. one taken on a node already accepted.
 *
 * Cases are joined by "id" and compared on their ceiling (results.h,
 * mb_case_ceiling: "ceiling", derived for files of schema 1). A case
 * fails when its rate is more than `tolerance` (a fraction: 0.10 = 10%) below
 * the baseline's, when it failed (status "failed") where the baseline's ran,
 * and, in fleet mode, for every rank (case "ranks" array) whose rate is that
 * far below (a collective, whose ranks all report the one time, is compared
 * once, as a case). Cases present on one side only, skipped on either side, or in
 * another rate unit are listed but do not fail. */
#ifndef MB_BASELINE_H
#define MB_BASELINE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "mb.h"

/* On return *failures (caller frees) is
 *   {"tolerance": 0.1, "compared": N, "passed": N,
 *    "failed": [{"id", "rank"?, "host"?, "rate", "baseline", "ratio", "reason"}],
 *    "not_compared": [{"id", "reason"}]}
 * Returns MB_OK when nothing failed, MB_EFAIL (exit status 1) when something
 * did, MB_EUSAGE when either file is not a results file, either
 * schema_version is one this mlbench does not read, or the tolerance is
 * not in [0, 1). */
int mb_baseline_check(const cJSON *results, const cJSON *baseline, double tolerance,
                      cJSON **failures, mb_err *err);

/* Prints the verdict: one line per failure (case, rank, rate vs baseline),
 * then how many cases were compared, passed, and not compared (with why). */
void mb_baseline_print(FILE *out, const cJSON *failures, double tolerance);

#endif
