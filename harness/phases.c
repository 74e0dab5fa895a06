#include "phases.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "component.h"
#include "formulas.h"

/* ---- the real clock --------------------------------------------------------------- */

static double real_now(void *ctx)
{
    (void)ctx;
    return mb_now();
}

static void real_sleep(void *ctx, double seconds)
{
    (void)ctx;
    if (!(seconds > 0))
        return;
    struct timespec ts = { .tv_sec = (time_t)seconds,
                           .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

const mb_phase_clock mb_phase_real_clock = { real_now, real_sleep, NULL };

/* ---- readings --------------------------------------------------------------------- */

typedef struct sampler {
    double last;  /* clock time of the last reading */
    double sm_sum, power_sum;
    int sm_n, power_n;
} sampler;

static void sample(const mb_phase_target *t, sampler *s, mb_phase_result *out, double now)
{
    mb_phase_reading rd;
    s->last = now;
    if (t->read == NULL)
        return;
    memset(&rd, 0, sizeof rd);
    if (!t->read(t->user, &rd))
        return;
    out->samples++;
    if (rd.have_sm) {
        out->sm_mhz_min = out->have_sm ? fmin(out->sm_mhz_min, rd.sm_mhz) : rd.sm_mhz;
        out->sm_mhz_max = out->have_sm ? fmax(out->sm_mhz_max, rd.sm_mhz) : rd.sm_mhz;
        out->have_sm = true;
        s->sm_sum += rd.sm_mhz;
        s->sm_n++;
    }
    if (rd.have_power) {
        out->power_w_max = out->have_power ? fmax(out->power_w_max, rd.power_w) : rd.power_w;
        out->have_power = true;
        s->power_sum += rd.power_w;
        s->power_n++;
    }
    if (rd.have_reasons) {
        out->reasons |= rd.reasons;
        out->have_reasons = true;
    }
}

static void sampler_finish(const sampler *s, mb_phase_result *out)
{
    out->sm_mhz_mean = s->sm_n ? s->sm_sum / s->sm_n : 0;
    out->power_w_mean = s->power_n ? s->power_sum / s->power_n : 0;
}

/* ---- one stretch of back-to-back iterations --------------------------------------- */

typedef struct stretch {
    long long iterations;
    double seconds; /* timed, as run() reports */
    double wall;    /* clock time from first run() to the end of the last */
    /* Optional: iterations and timed seconds per sub-window of length / n
     * (by the clock time each iteration ended at; the last sub-window takes
     * what ends past its end). The stretch's length is unchanged. */
    int sub_n;
    long long sub_iterations[MB_SUSTAINED_SUB_WINDOWS];
    double sub_seconds[MB_SUSTAINED_SUB_WINDOWS];
} stretch;

static int one_run(const mb_phase_target *t, double *seconds, mb_err *err)
{
    *seconds = 0;
    int rc = t->run(t->user, seconds, err);
    if (rc == MB_OK && (!(*seconds > 0) || !isfinite(*seconds)))
        rc = mb_errf(err, MB_EFAIL, "run() reported a non-positive time (%g s)", *seconds);
    return rc;
}

/* Runs iterations until `length` seconds of clock time have passed (at least
 * one). With s != NULL the device is read every MB_PHASE_SAMPLE_INTERVAL and
 * once at the end, while the work's clocks still hold. */
static int run_for(const mb_phase_target *t, const mb_phase_clock *clk, double length, sampler *s,
                   mb_phase_result *out, stretch *st, mb_err *err)
{
    int sub_n = st->sub_n;
    memset(st, 0, sizeof *st);
    st->sub_n = sub_n;
    double start = clk->now(clk->ctx), now = start;
    if (s)
        s->last = start;
    do {
        double sec;
        int rc = one_run(t, &sec, err);
        if (rc != MB_OK)
            return rc;
        st->iterations++;
        st->seconds += sec;
        now = clk->now(clk->ctx);
        if (st->sub_n > 0) {
            int w = (int)((now - start) / length * st->sub_n);
            w = w < 0 ? 0 : w >= st->sub_n ? st->sub_n - 1 : w;
            st->sub_iterations[w]++;
            st->sub_seconds[w] += sec;
        }
        if (s && now - s->last >= MB_PHASE_SAMPLE_INTERVAL)
            sample(t, s, out, now);
    } while (now - start < length);
    if (s && s->last != now)
        sample(t, s, out, now);
    st->wall = now - start;
    return MB_OK;
}

static double rate_of(const mb_phase_target *t, long long iterations, double seconds)
{
    double scale = t->rate_scale > 0 ? t->rate_scale : 1.0;
    return seconds > 0 ? t->work_per_iter * (double)iterations / seconds / scale : 0;
}

/* ---- the phases ------------------------------------------------------------------- */

int mb_phase_burst(const mb_phase_opts *o, const mb_phase_target *t, const mb_phase_clock *clk,
                   mb_phase_result *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->window_seconds = o->burst_window;
    out->idle_seconds = o->burst_idle;
    int n = o->burst_windows > 0 ? o->burst_windows : 1;
    double rates[n];
    sampler s = { 0 };
    for (int w = 0; w < n; w++) {
        /* Nothing runs during the gap: run() has returned, the device is
         * idle, so its clocks and power budget recover before the window. */
        clk->sleep(clk->ctx, o->burst_idle);
        stretch st = { 0 };
        int rc = run_for(t, clk, o->burst_window, &s, out, &st, err);
        if (rc != MB_OK)
            return rc;
        rates[w] = rate_of(t, st.iterations, st.seconds);
        out->iterations += st.iterations;
        out->seconds += st.seconds;
        out->wall_seconds += st.wall;
        out->windows++;
    }
    sampler_finish(&s, out);
    out->rate = mb_median(rates, n);
    out->rate_best = mb_max(rates, n);
    out->measured = true;
    return MB_OK;
}

int mb_phase_sustained(const mb_phase_opts *o, const mb_phase_target *t, const mb_phase_clock *clk,
                       mb_phase_result *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->window_seconds = o->sustained;
    out->settle_seconds = o->settle;
    stretch st = { 0 };
    int rc = MB_OK;
    /* Untimed: the clocks fall from boost to where the power cap holds them. */
    if (o->settle > 0)
        rc = run_for(t, clk, o->settle, NULL, out, &st, err);
    if (rc != MB_OK)
        return rc;
    /* Timed, its iterations counted in consecutive sub-windows: their rates'
     * spread is the noise of the steady state the rate is taken in. */
    sampler s = { 0 };
    st.sub_n = MB_SUSTAINED_SUB_WINDOWS;
    rc = run_for(t, clk, o->sustained, &s, out, &st, err);
    if (rc != MB_OK)
        return rc;
    sampler_finish(&s, out);
    double rates[MB_SUSTAINED_SUB_WINDOWS];
    int n = 0;
    for (int w = 0; w < st.sub_n; w++) /* iterations longer than a sub-window leave some empty */
        if (st.sub_iterations[w] > 0)
            rates[n++] = rate_of(t, st.sub_iterations[w], st.sub_seconds[w]);
    out->windows = 1;
    out->sub_windows = n;
    out->sub_cv = n > 0 ? mb_cv(rates, n) : 0;
    out->sub_rate_min = n > 0 ? mb_min(rates, n) : 0;
    out->sub_rate_max = n > 0 ? mb_max(rates, n) : 0;
    out->iterations = st.iterations;
    out->seconds = st.seconds;
    out->wall_seconds = st.wall;
    out->rate = rate_of(t, st.iterations, st.seconds);
    out->rate_best = out->rate;
    out->measured = true;
    return MB_OK;
}

int mb_phase_opts_check(const mb_phase_opts *o, mb_err *err)
{
    if (o->burst_windows < 0 || o->burst_windows > 1000)
        return mb_errf(err, MB_EUSAGE, "burst_windows: expected an integer in [0, 1000], got %d", o->burst_windows);
    const struct {
        const char *name;
        double v, lo;
    } t[] = { { "burst_window_time", o->burst_window, 1e-4 },
              { "burst_idle_time", o->burst_idle, 0 },
              { "settle_time", o->settle, 0 },
              { "sustained_time", o->sustained, 1e-4 } };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!(t[i].v >= t[i].lo && t[i].v <= 3600))
            return mb_errf(err, MB_EUSAGE, "%s: expected seconds in [%g, 3600], got %g", t[i].name, t[i].lo,
                           t[i].v);
    return MB_OK;
}
