/* gbench_shim.h: a small C API over Google Benchmark (the one C++ file,
 * gbench_shim.cc). Google Benchmark decides iteration counts, applies the
 * minimum time and repeats; results come back in-process through a custom
 * reporter, one callback per repetition, so mlbench keeps its own records.
 *
 * Every benchmark runs in manual-time mode: the C function reports the
 * seconds of each iteration's timed region (host clock or CUDA events). */
#ifndef MB_GBENCH_SHIM_H
#define MB_GBENCH_SHIM_H

#include <stdbool.h>

#include "mb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbgb_state mbgb_state;
typedef void (*mbgb_fn)(mbgb_state *st, void *ctx);

typedef struct mbgb_options {
    double min_time;      /* seconds of timed iterations per repetition (> 0) */
    int repetitions;      /* >= 1 */
    long long iterations; /* > 0: fixed count (collectives under MPI); 0: adaptive */
} mbgb_options;

/* One repetition's outcome (aggregates are not reported: mlbench computes its
 * own statistics from the repetitions, see harness/runner.c). */
typedef struct mbgb_run {
    const char *name;
    int repetition_index; /* 0-based */
    int repetitions;
    long long iterations;
    double seconds;        /* accumulated manual time of the repetition */
    bool error;            /* the benchmark called mb_gb_skip_with_error */
    const char *error_message;
} mbgb_run;
typedef void (*mbgb_run_cb)(const mbgb_run *run, void *user);

/* Initialises Google Benchmark once with a synthesised argv holding only the
 * given --benchmark_* flags (Initialize would otherwise exit the process on
 * --help or a bad flag). Flags it does not recognise give MB_EUSAGE. */
int mb_gb_init(int nflags, char **flags, mb_err *err);
/* The library's version as the build saw it ("1.7.1" or "unknown"). */
const char *mb_gb_version(void);

/* Registers one benchmark; run it with mb_gb_run_all. */
int mb_gb_register(const char *name, mbgb_fn fn, void *ctx, const mbgb_options *opt, mb_err *err);
/* Runs every registered benchmark, reports each repetition to cb, then
 * unregisters them all. */
int mb_gb_run_all(mbgb_run_cb cb, void *user, mb_err *err);

/* Inside the benchmark function. */
bool mb_gb_keep_running(mbgb_state *st);
void mb_gb_set_iteration_time(mbgb_state *st, double seconds);
/* A user counter in Google Benchmark's own output; is_rate: divided by the
 * (manual) time by Google Benchmark. */
void mb_gb_set_counter(mbgb_state *st, const char *name, double value, bool is_rate);
/* Marks the repetition as failed; the loop must end (keep_running is false). */
void mb_gb_skip_with_error(mbgb_state *st, const char *message);

#ifdef __cplusplus
}
#endif

#endif
