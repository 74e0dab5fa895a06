/* phases.h: the burst and sustained phases of a compute case (GEMM, conv,
 * peak; docs/gpu-gemm-conv.md "Burst and sustained").
 *
 * A GPU under load does not hold one rate: while its clocks are free (after
 * an idle moment) it runs at boost clock; after a second or so of heavy work
 * it reaches its power cap and the clock settles lower. Both rates are real,
 * so a compute case measures both:
 *
 *   burst:     `windows` timed windows of `window` seconds, each after
 *              `idle` seconds with nothing running (clocks free again). The
 *              rate is the median of the windows' rates.
 *   sustained: `settle` seconds of untimed back-to-back work (the clocks
 *              reach their steady state), then at least `duration` seconds
 *              of timed back-to-back work. The rate is its total work over
 *              its total timed seconds. The timed part is cut into
 *              MB_SUSTAINED_SUB_WINDOWS consecutive sub-windows: the spread
 *              of their rates is the noise of that steady state (a clock
 *              that oscillates at the power cap shows there), the statistic
 *              that judges the ceiling (results.h, mb_noise_judge).
 *
 * The bookkeeping is here, apart from the runner, with an injectable clock so
 * tests/test_phases.c checks it with a fake one. Device readings (SM clock,
 * power, throttle reasons) come through an optional callback: the runner
 * passes NVML's (harness/api/gpu_hooks.h), a test passes its own. */
#ifndef MB_PHASES_H
#define MB_PHASES_H

#include <stdbool.h>

#include "mb.h"

/* Time source and idle wait. The real one: CLOCK_MONOTONIC and nanosleep. */
typedef struct mb_phase_clock {
    double (*now)(void *ctx);
    void (*sleep)(void *ctx, double seconds);
    void *ctx;
} mb_phase_clock;

extern const mb_phase_clock mb_phase_real_clock;

/* Phase lengths in seconds (job-file keys burst_windows, burst_window_time,
 * burst_idle_time, settle_time, sustained_time; docs/suites.md). */
typedef struct mb_phase_opts {
    int burst_windows;     /* 0 = no phases */
    double burst_window;
    double burst_idle;
    double settle;
    double sustained;
} mb_phase_opts;

/* Defaults: about 4.75 s per compute case (5 x (0.5 + 0.05) + 1 + 1). */
#define MB_DEFAULT_BURST_WINDOWS 5
#define MB_DEFAULT_BURST_WINDOW_TIME 0.05
#define MB_DEFAULT_BURST_IDLE_TIME 0.5
#define MB_DEFAULT_SETTLE_TIME 1.0
#define MB_DEFAULT_SUSTAINED_TIME 1.0

/* One reading of the device. */
typedef struct mb_phase_reading {
    bool have_sm, have_power, have_reasons;
    double sm_mhz;
    double power_w;
    unsigned long long reasons; /* NVML clock-event reason bits */
} mb_phase_reading;

/* What the phases drive: run() performs one iteration and reports its timed
 * seconds (component.h's contract); read() (optional) takes a reading. */
typedef struct mb_phase_target {
    int (*run)(void *user, double *seconds, mb_err *err);
    bool (*read)(void *user, mb_phase_reading *out);
    void *user;
    double work_per_iter; /* work units per run() */
    double rate_scale;    /* rate = work / seconds / rate_scale */
} mb_phase_target;

/* Sub-windows of the sustained phase's timed part (each at least one run()). */
#define MB_SUSTAINED_SUB_WINDOWS 10

/* Readings are taken at the end of a run() at most this often, and at the
 * end of every window. */
#define MB_PHASE_SAMPLE_INTERVAL 0.02

typedef struct mb_phase_result {
    bool measured;
    int windows;         /* burst: windows timed; sustained: 1 */
    long long iterations;
    double seconds;      /* timed seconds, the sum of run()'s */
    double wall_seconds; /* wall-clock length of the timed part (idle and settle excluded) */
    double window_seconds; /* burst: the requested window; sustained: the requested duration */
    double idle_seconds;   /* burst: the idle gap before each window */
    double settle_seconds; /* sustained: untimed work before timing */
    double rate;         /* burst: median of the windows' rates; sustained: work / seconds */
    double rate_best;    /* burst: the best window; sustained: = rate */
    int samples;         /* readings taken during the timed part */
    int sub_windows;     /* sustained: sub-windows timed; 0 for burst */
    double sub_cv;       /* sustained: stddev / mean of the sub-windows' rates */
    double sub_rate_min, sub_rate_max;
    bool have_sm, have_power, have_reasons;
    double sm_mhz_min, sm_mhz_max, sm_mhz_mean;
    double power_w_max, power_w_mean;
    unsigned long long reasons; /* OR of the reasons seen */
} mb_phase_result;

/* Runs the burst phase into *out. MB_OK, or run()'s error (out then holds
 * what was measured before it, measured = false). */
int mb_phase_burst(const mb_phase_opts *o, const mb_phase_target *t, const mb_phase_clock *clk,
                   mb_phase_result *out, mb_err *err);
/* Runs the sustained phase into *out. */
int mb_phase_sustained(const mb_phase_opts *o, const mb_phase_target *t, const mb_phase_clock *clk,
                       mb_phase_result *out, mb_err *err);

/* Checks lengths as a job file gives them: MB_EUSAGE naming the bad one. */
int mb_phase_opts_check(const mb_phase_opts *o, mb_err *err);

#endif
