/* suite.h: fio-style INI job files -> the list of cases to run.
 * Format: docs/suites.md. Every error is "FILE:LINE: what was expected". */
#ifndef MB_SUITE_H
#define MB_SUITE_H

#include "component.h"
#include "params.h"
#include "phases.h"

typedef struct mb_case {
    char *id;       /* component/backend/name=value,... (all params, sorted) */
    char *section;  /* job-file section */
    char *file;     /* job file and line of the section header */
    int line;
    const mb_component_ops *ops;
    mb_params *params;
    mb_param_spec *owned_spec; /* the spec params points at when the backend's
                                  own is unavailable (params_unknown) */
    int repetitions;
    double min_time;
    double warmup_time;
    long long iterations; /* 0 = adaptive */
    mb_phase_opts phases; /* compute cases: burst and sustained lengths */
    double max_cv;        /* a case whose rates' cv exceeds this is flagged noisy; 0 = no check */
} mb_case;

typedef struct mb_suite {
    char *name;
    mb_case *cases;
    int n_cases;
    int cap_cases; /* slots allocated in cases */
} mb_suite;

/* Cases of one suite, includes counted. Lists multiply (ten keys of ten
 * values are 10^10 cases from a few hundred bytes), so the count is checked
 * before expanding. The shipped `all` suite has under a hundred; 10^4 cases
 * of at least a second each are hours of measuring. (It was 10^5: expanding
 * that many took 0.35 s here and over 2 s under ASan, found by fuzz_suite.)
 * The fuzz build (MLBENCH_FUZZ, not the sanitizer test build) holds 10^2:
 * a case costs ~25 allocations (its parameters, defaults included, each its
 * own string), slow under ASan + UBSan, so fuzz_suite's rate follows the
 * cases its inputs expand to: with 10^4 it fell to 400-1500 inputs a second
 * (a 319-byte file of 9072 cases took 0.16 s), with 10^2 it runs ~10000.
 * The bound itself is tested at 10^4 (test_core). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MB_SUITE_MAX_CASES 100
#else
#define MB_SUITE_MAX_CASES 10000
#endif

/* Defaults for cases whose job file does not set them. */
#define MB_DEFAULT_REPETITIONS 5
#define MB_DEFAULT_MIN_TIME 0.2
#define MB_DEFAULT_WARMUP_TIME 0.1
/* cv (stddev/mean of the repetitions' rates) above which a case is flagged
 * "noisy": not a ceiling. On the first H100 run (../shared/h100/all.json)
 * the median cv was 1.7% and 3 of 55 cases exceeded 10%. */
#define MB_DEFAULT_MAX_CV 0.10
/* Bounds of a case's repetitions and of its min_time and warmup_time in
 * seconds, the same in a job file and on the command line. */
#define MB_MAX_REPETITIONS 1000
#define MB_MAX_CASE_SECONDS 3600

/* Loads `spec`: a suite name (configs/suites/NAME.ini), a path, or a comma
 * list of those. MB_EUSAGE with FILE:LINE on any error; *out is then empty. */
int mb_suite_load(const char *spec, mb_suite *out, mb_err *err);
/* Loads one job file. */
int mb_suite_load_file(const char *path, mb_suite *out, mb_err *err);
/* Keeps the cases whose id or section matches the POSIX extended regex. */
int mb_suite_filter(mb_suite *s, const char *regex, mb_err *err);
void mb_suite_free(mb_suite *s);
/* The names of the shipped suites (the .ini files in configs/suites), for --help/list:
 * writes a comma-separated list into buf. */
void mb_suite_names(char *buf, size_t len);

/* The entry of `list` (names separated by ", ") nearest to `word` by edit
 * distance, copied into buf; false when none is near enough to be a likely
 * typo (distance at most 2, and less than half the word). */
bool mb_did_you_mean(const char *word, const char *list, char *buf, size_t len);

#endif
