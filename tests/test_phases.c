/* test_phases.c: the burst/sustained bookkeeping (harness/phases.c) with a
 * fake clock: idle gaps, window count and length, sustained duration, the
 * settle period kept out of the timing, the rates and the readings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "phases.h"
#include "results.h"

#define MAX_EVENTS 4096

/* Everything the fake world remembers. Times are binary fractions so the
 * arithmetic is exact. */
typedef struct fake {
    double t;                  /* the clock */
    double iter_wall;          /* clock time one run() takes */
    double timed_fast;         /* seconds run() reports once "settled" */
    double timed_slow;         /* ... before `slow_until` (clock time) */
    double slow_until;
    double window_factor;      /* burst: timed seconds grow by this per window */
    int sleeps;                /* sleep() calls so far */
    double sleep_start[MAX_EVENTS], sleep_len[MAX_EVENTS];
    int runs;
    double run_start[MAX_EVENTS], run_end[MAX_EVENTS];
    int run_window[MAX_EVENTS]; /* sleeps before this run */
    int fail_at;               /* run number that fails (0 = none) */
    int reads;
    double (*timed_at)(double t); /* when set: the seconds run() reports at clock time t (a recorded clock) */
} fake;

static double fake_now(void *ctx)
{
    return ((fake *)ctx)->t;
}

static void fake_sleep(void *ctx, double s)
{
    fake *f = ctx;
    f->sleep_start[f->sleeps] = f->t;
    f->sleep_len[f->sleeps] = s;
    f->sleeps++;
    f->t += s;
}

static int fake_run(void *user, double *seconds, mb_err *err)
{
    fake *f = user;
    if (f->fail_at && f->runs + 1 == f->fail_at)
        return mb_errf(err, MB_EFAIL, "injected failure");
    int i = f->runs++;
    f->run_start[i] = f->t;
    f->run_window[i] = f->sleeps;
    double timed = f->timed_at ? f->timed_at(f->t) : f->t < f->slow_until ? f->timed_slow : f->timed_fast;
    if (f->sleeps > 0)
        timed *= 1.0 + f->window_factor * (f->sleeps - 1);
    f->t += f->iter_wall;
    f->run_end[i] = f->t;
    *seconds = timed;
    return MB_OK;
}

/* SM clock 1000, 1001, ...; power 500 + 2k; reasons alternate 0x4 and 0x1. */
static bool fake_read(void *user, mb_phase_reading *rd)
{
    fake *f = user;
    int k = f->reads++;
    rd->have_sm = rd->have_power = rd->have_reasons = true;
    rd->sm_mhz = 1000 + k;
    rd->power_w = 500 + 2 * k;
    rd->reasons = k % 2 ? 0x1 : 0x4;
    return true;
}

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    f->t = 100.0;
    f->iter_wall = 1.0 / 128;  /* 7.8125 ms */
    f->timed_fast = 1.0 / 256; /* the timed region is half of it */
    f->timed_slow = 1.0 / 256;
}

static mb_phase_target target_of(fake *f, bool with_reads)
{
    mb_phase_target t = { .run = fake_run, .read = with_reads ? fake_read : NULL, .user = f,
                          .work_per_iter = 2e12, .rate_scale = 1e12 };
    return t;
}

static void test_burst_windows_and_gaps(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    f.window_factor = 0.25; /* window w reports (1 + 0.25 w) x the time: rates fall */
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .burst_windows = 5, .burst_window = 1.0 / 16, .burst_idle = 0.5 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_burst(&o, &t, &clk, &r, &err), MB_OK);
    assert_true(r.measured);
    assert_int_equal(r.windows, 5);
    /* One idle gap before every window, each as long as asked, and no run
     * inside one. */
    assert_int_equal(f.sleeps, 5);
    for (int i = 0; i < f.runs; i++) {
        int w = f.run_window[i];
        assert_true(w >= 1 && w <= 5);
        assert_true(f.sleep_len[w - 1] >= o.burst_idle);
        assert_true(f.run_start[i] >= f.sleep_start[w - 1] + f.sleep_len[w - 1]);
        if (i > 0 && f.run_window[i - 1] != w) /* first run of a window: the gap before it */
            assert_true(f.run_start[i] - f.run_end[i - 1] >= o.burst_idle);
    }
    /* Each window lasts at least its length and stops at the first run
     * past it: 1/16 s of 1/128 s runs is 8 runs. */
    for (int w = 1; w <= 5; w++) {
        int n = 0;
        for (int i = 0; i < f.runs; i++)
            n += f.run_window[i] == w;
        assert_int_equal(n, 8);
    }
    assert_int_equal(r.iterations, 40);
    assert_true(fabs(r.wall_seconds - 5.0 / 16) < 1e-12); /* idle excluded */
    /* Window rates: 2 TFLOP per run / (1/256 s x (1 + 0.25 w)) = 512 / (1 + 0.25 w)
     * TFLOP/s; the median is window 2's, the best window 0's. */
    assert_true(fabs(r.rate - 512.0 / 1.5) < 1e-9);
    assert_true(fabs(r.rate_best - 512.0) < 1e-9);
    double timed = 0;
    for (int w = 0; w < 5; w++)
        timed += 8.0 / 256 * (1 + 0.25 * w);
    assert_true(fabs(r.seconds - timed) < 1e-12);
    assert_true(r.window_seconds == o.burst_window && r.idle_seconds == o.burst_idle);
}

static void test_sustained_settle_excluded(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    /* During the settle second the runs report four times the time: counted,
     * they would pull the rate down. */
    f.timed_slow = 4.0 / 256;
    f.slow_until = f.t + 1.0;
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .burst_windows = 5, .settle = 1.0, .sustained = 1.5 };
    mb_phase_result r;
    mb_err err = { 0 };
    double start = f.t;
    assert_int_equal(mb_phase_sustained(&o, &t, &clk, &r, &err), MB_OK);
    assert_true(r.measured);
    assert_int_equal(f.sleeps, 0); /* back to back: no gap */
    for (int i = 1; i < f.runs; i++)
        assert_true(f.run_start[i] == f.run_end[i - 1]);
    /* Settle: 128 runs; timed: 192 runs (1.5 s of 1/128 s runs). */
    assert_int_equal(f.runs, 128 + 192);
    assert_int_equal(r.iterations, 192);
    assert_true(r.wall_seconds >= o.sustained);
    assert_true(fabs(r.wall_seconds - 1.5) < 1e-12);
    assert_true(fabs(f.t - start - 2.5) < 1e-12);
    assert_true(fabs(r.seconds - 192.0 / 256) < 1e-12);
    assert_true(fabs(r.rate - 512.0) < 1e-9); /* 2 TFLOP / (1/256 s) */
    assert_true(r.rate_best == r.rate);
    assert_int_equal(r.windows, 1);
    assert_true(r.settle_seconds == 1.0 && r.window_seconds == 1.5);
}

static void test_sustained_duration_not_a_multiple(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    f.iter_wall = 0.375; /* longer runs: the phase ends at the first run past 1 s */
    f.timed_fast = 0.25;
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .settle = 0, .sustained = 1.0 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_sustained(&o, &t, &clk, &r, &err), MB_OK);
    assert_int_equal(r.iterations, 3);
    assert_true(r.wall_seconds >= 1.0);
    assert_true(fabs(r.rate - 8.0) < 1e-12); /* 3 x 2 TFLOP / 0.75 s */
}

static void test_readings(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, true);
    /* 1/16 s windows of 1/128 s runs: readings every 20 ms (after runs 3 and
     * 6: 23.4 ms, 46.9 ms) and at the window's end (62.5 ms): 3 per window. */
    mb_phase_opts o = { .burst_windows = 2, .burst_window = 1.0 / 16, .burst_idle = 0.25 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_burst(&o, &t, &clk, &r, &err), MB_OK);
    assert_int_equal(r.samples, 6);
    assert_true(r.have_sm && r.have_power && r.have_reasons);
    assert_true(r.sm_mhz_min == 1000 && r.sm_mhz_max == 1005);
    assert_true(fabs(r.sm_mhz_mean - 1002.5) < 1e-12);
    assert_true(r.power_w_max == 510 && fabs(r.power_w_mean - 505) < 1e-12);
    assert_true(r.reasons == (0x1 | 0x4));
    /* The settle period is not read either: only the timed second. */
    fake_init(&f);
    o = (mb_phase_opts){ .settle = 1.0, .sustained = 1.0 };
    assert_int_equal(mb_phase_sustained(&o, &t, &clk, &r, &err), MB_OK);
    assert_int_equal(r.samples, 43); /* after every 3rd of 128 runs (23.4 ms), and at the end */
    assert_int_equal(f.reads, r.samples);
}

static void test_no_reader_no_readings(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .burst_windows = 1, .burst_window = 0.1, .burst_idle = 0 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_burst(&o, &t, &clk, &r, &err), MB_OK);
    assert_int_equal(r.samples, 0);
    assert_false(r.have_sm || r.have_power || r.have_reasons);
}

static void test_run_error_propagates(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    f.fail_at = 20;
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .burst_windows = 5, .burst_window = 1.0 / 16, .burst_idle = 0.5 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_burst(&o, &t, &clk, &r, &err), MB_EFAIL);
    assert_false(r.measured);
    assert_non_null(strstr(err.msg, "injected failure"));
}

static void test_opts_check(void **st)
{
    (void)st;
    mb_err err = { 0 };
    mb_phase_opts o = { 5, 0.05, 0.5, 1.0, 1.0 };
    assert_int_equal(mb_phase_opts_check(&o, &err), MB_OK);
    o.sustained = 0;
    assert_int_equal(mb_phase_opts_check(&o, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "sustained_time"));
    o = (mb_phase_opts){ 5, 0.05, -1, 1.0, 1.0 };
    err = (mb_err){ 0 }; /* the first error sticks */
    assert_int_equal(mb_phase_opts_check(&o, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "burst_idle_time"));
}

/* The sustained phase's sub-windows: ten of a tenth of its length each,
 * by the clock time each run ended; the phase is no longer for them. */
static void test_sustained_sub_windows(void **st)
{
    (void)st;
    fake f;
    fake_init(&f);
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .settle = 0, .sustained = 1.0 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_sustained(&o, &t, &clk, &r, &err), MB_OK);
    assert_int_equal(r.iterations, 128); /* 1 s of 1/128 s runs, as without sub-windows */
    assert_int_equal(r.sub_windows, MB_SUSTAINED_SUB_WINDOWS);
    assert_true(r.sub_cv == 0 && r.sub_rate_min == 512 && r.sub_rate_max == 512);
    /* runs longer than a sub-window: the empty ones are left out, the phase keeps its length */
    fake_init(&f);
    f.iter_wall = 0.375;
    f.timed_fast = 0.25;
    assert_int_equal(mb_phase_sustained(&o, &t, &clk, &r, &err), MB_OK);
    assert_int_equal(r.iterations, 3);
    assert_int_equal(r.sub_windows, 3);
}

/* A recorded clock at the power cap (the H200's bf16 GEMM, 2026-11-28:
 * repetitions' median 671.9, burst 789.2, sustained 745.7 TFLOP/s): in the
 * settled second the rate wanders by +-1%. */
static double capped(double t)
{
    double rate = 745.7 * (1 + 0.01 * sin(t * 37.0)); /* TFLOP/s; 2 TFLOP per run */
    return 2.0 / rate;
}

/* An oscillating one: +-18% every 0.2 s, a square wave. */
static double oscillating(double t)
{
    double rate = 680.0 * (fmod(t, 0.4) < 0.2 ? 1.18 : 0.82);
    return 2.0 / rate;
}

static mb_phase_result sustained_of(double (*clock)(double))
{
    fake f;
    fake_init(&f);
    f.timed_at = clock;
    mb_phase_clock clk = { fake_now, fake_sleep, &f };
    mb_phase_target t = target_of(&f, false);
    mb_phase_opts o = { .settle = 1.0, .sustained = 1.0 };
    mb_phase_result r;
    mb_err err = { 0 };
    assert_int_equal(mb_phase_sustained(&o, &t, &clk, &r, &err), MB_OK);
    return r;
}

/* The noise rule on the steady state: the power-capped case that the old rule
 * flagged (sustained 11% above the repetitions' median, which ran while the
 * clock settled) is ok, with the settling said; the oscillating one stays
 * noisy, its sub-windows' spread the reason. */
static void test_noise_on_the_steady_state(void **st)
{
    (void)st;
    mb_phase_result cap = sustained_of(capped), osc = sustained_of(oscillating);
    assert_true(cap.sub_windows == 10 && cap.sub_cv < 0.01);
    assert_true(osc.sub_windows == 10 && osc.sub_cv > 0.15);
    mb_noise_in in = { .cv = 0.009, .max_cv = 0.10, .repetitions = 5, .median = 671.9, .burst = 789.2,
                       .sustained = cap.rate, .sustained_cv = cap.sub_cv, .sustained_windows = cap.sub_windows };
    char why[512];
    assert_false(mb_noise_judge(&in, why, sizeof why));
    assert_true(mb_noise_settling(&in, why, sizeof why));
    assert_non_null(strstr(why, "ran before the clock settled"));
    mb_noise_in old = in; /* a file from before the sub-windows: the old rule, noisy */
    old.sustained_cv = NAN;
    old.sustained_windows = 0;
    assert_true(mb_noise_judge(&old, why, sizeof why));
    assert_non_null(strstr(why, "the repetitions' median"));
    in.sustained = osc.rate;
    in.sustained_cv = osc.sub_cv;
    assert_true(mb_noise_judge(&in, why, sizeof why));
    assert_non_null(strstr(why, "sub-windows disagree"));
    /* a sustained rate above burst is noise on the steady state too */
    in = (mb_noise_in){ .cv = 0.01, .max_cv = 0.10, .repetitions = 5, .median = 700, .burst = 700,
                        .sustained = 780, .sustained_cv = 0.005, .sustained_windows = 10 };
    assert_true(mb_noise_judge(&in, why, sizeof why));
    assert_non_null(strstr(why, "above burst"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_windows_and_gaps),
        cmocka_unit_test(test_sustained_settle_excluded),
        cmocka_unit_test(test_sustained_duration_not_a_multiple),
        cmocka_unit_test(test_readings),
        cmocka_unit_test(test_no_reader_no_readings),
        cmocka_unit_test(test_run_error_propagates),
        cmocka_unit_test(test_opts_check),
        cmocka_unit_test(test_sustained_sub_windows),
        cmocka_unit_test(test_noise_on_the_steady_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
