#include "runner.h"
#include "vocabulary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "gbench_shim.h"
#include "gpu_hooks.h"
#include "results_writers.h" /* mb_fmt_number: the table's number format */

/* What the Google Benchmark function needs to call the component. */
typedef struct bench_ctx {
    const mb_component_ops *ops;
    void *state;
    mb_err err;
    mb_record *rec;
} bench_ctx;

static void bench_fn(mbgb_state *st, void *arg)
{
    bench_ctx *bc = arg;
    while (mb_gb_keep_running(st)) {
        double seconds = 0;
        if (bc->ops->run(bc->state, &seconds, &bc->err) != MB_OK) {
            mb_gb_skip_with_error(st, bc->err.msg);
            break;
        }
        mb_dist_watchdog_kick(); /* a collective step completed: every rank is alive */
        if (!(seconds > 0) || !isfinite(seconds)) {
            /* NaN is neither: say which, so the kernel's bug is found */
            mb_errf(&bc->err, MB_EFAIL, "run() reported a %s time (%g s)",
                    seconds <= 0 ? "non-positive" : "non-finite", seconds);
            mb_gb_skip_with_error(st, bc->err.msg);
            break;
        }
        mb_gb_set_iteration_time(st, seconds);
    }
}

static void on_repetition(const mbgb_run *run, void *user)
{
    bench_ctx *bc = user;
    if (run->error) {
        if (bc->err.code == MB_OK)
            mb_errf(&bc->err, MB_EFAIL, "%s", run->error_message);
        return;
    }
    if (mb_record_add_repetition(bc->rec, run->iterations, run->seconds) != MB_OK)
        mb_errf(&bc->err, MB_ESYS, "out of memory recording a repetition");
}

static void set_outcome(mb_record *r, int code, const char *msg)
{
    r->status = code == MB_ESKIP ? MB_CASE_SKIPPED : MB_CASE_FAILED;
    snprintf(r->reason, sizeof r->reason, "%s", msg && *msg ? msg : "unknown error");
}

/* Untimed iterations until warmup_time has passed (at least one), so module
 * loading, handle creation, page faults and clock ramp-up stay out. */
static int warm_up(const mb_component_ops *ops, void *state, double warmup_time, mb_err *err)
{
    double start = mb_now();
    do {
        double s;
        int rc = ops->run(state, &s, err);
        if (rc != MB_OK)
            return rc;
    } while (mb_now() - start < warmup_time);
    return MB_OK;
}

static void effective(const mb_case *c, const mb_runner_opts *o, mbgb_options *g, double *warmup)
{
    g->repetitions = o->repetitions > 0 ? o->repetitions : c->repetitions;
    g->min_time = o->min_time > 0 ? o->min_time : c->min_time;
    g->iterations = c->iterations;
    if (c->ops->collective && g->iterations <= 0)
        g->iterations = MB_DEFAULT_COLLECTIVE_ITERATIONS;
    *warmup = o->warmup_time >= 0 ? o->warmup_time : c->warmup_time;
    if (c->ops->collective)
        *warmup = 0; /* a time-based warm-up would differ between ranks */
}

static void time_case(const mb_case *c, const mb_runner_opts *o, void *state, mb_record *r)
{
    const mb_component_ops *ops = c->ops;
    bench_ctx bc = { .ops = ops, .state = state, .rec = r };
    mbgb_options g;
    double warmup;
    effective(c, o, &g, &warmup);
    if (ops->collective) {
        /* Same warm-up count everywhere: a couple of untimed collectives. */
        for (int i = 0; i < 2 && bc.err.code == MB_OK; i++) {
            double s;
            ops->run(state, &s, &bc.err);
            mb_dist_watchdog_kick();
        }
    } else {
        warm_up(ops, state, warmup, &bc.err);
    }
    if (bc.err.code == MB_OK && ops->timing_start)
        ops->timing_start(state);
    /* GPU clocks, temperature, power and throttle reasons around the timed
     * repetitions alone: after the warm-up the clocks are up, so a drop
     * between the two samples is throttling during the measurement. */
    void *gpu_snapshot = bc.err.code == MB_OK && ops->uses_gpu ? mb_gpu_monitor_begin() : NULL;
    if (bc.err.code == MB_OK && mb_gb_register(c->id, bench_fn, &bc, &g, &bc.err) == MB_OK)
        mb_gb_run_all(on_repetition, &bc, &bc.err);
    if (gpu_snapshot)
        mb_gpu_monitor_end(gpu_snapshot, &r->report);
    if (bc.err.code != MB_OK) {
        set_outcome(r, bc.err.code == MB_ESKIP ? MB_ESKIP : MB_EFAIL, bc.err.msg);
        return;
    }
    if (r->repetitions == 0)
        set_outcome(r, MB_EFAIL, "Google Benchmark reported no repetition");
}

/* ---- burst and sustained (compute cases) ---------------------------------- */

typedef struct phase_ctx {
    const mb_component_ops *ops;
    void *state;
} phase_ctx;

static int phase_run(void *user, double *seconds, mb_err *err)
{
    phase_ctx *pc = user;
    return pc->ops->run(pc->state, seconds, err);
}

static bool phase_read(void *user, mb_phase_reading *out)
{
    (void)user;
    return mb_gpu_read(out);
}

/* After the repetitions, a compute case's two phases (harness/api/phases.h).
 * Their iterations also count for verify(), which follows. A failure fails
 * the case: a ceiling that stops working under load is no ceiling. */
static void phases_case(const mb_case *c, void *state, mb_record *r)
{
    const mb_component_ops *ops = c->ops;
    if (!ops->compute || c->phases.burst_windows <= 0 || r->status != MB_CASE_OK)
        return;
    phase_ctx pc = { ops, state };
    mb_phase_target t = { .run = phase_run, .read = ops->uses_gpu ? phase_read : NULL, .user = &pc,
                          .work_per_iter = ops->work_per_iter ? ops->work_per_iter(state) : 0,
                          .rate_scale = ops->rate_scale };
    mb_err err = { 0 };
    const char *which = "burst";
    int rc = mb_phase_burst(&c->phases, &t, &mb_phase_real_clock, &r->burst, &err);
    if (rc == MB_OK) {
        which = "sustained";
        rc = mb_phase_sustained(&c->phases, &t, &mb_phase_real_clock, &r->sustained, &err);
    }
    if (rc != MB_OK) {
        r->status = rc == MB_ESKIP ? MB_CASE_SKIPPED : MB_CASE_FAILED;
        snprintf(r->reason, sizeof r->reason, "%s phase: %.990s", which, err.msg);
        return;
    }
    if (r->burst.have_reasons)
        mb_gpu_reasons_text(r->burst.reasons, r->burst_reasons, sizeof r->burst_reasons);
    if (r->sustained.have_reasons)
        mb_gpu_reasons_text(r->sustained.reasons, r->sustained_reasons, sizeof r->sustained_reasons);
}

static void verify_case(const mb_component_ops *ops, void *state, mb_record *r)
{
    mb_err err = { 0 };
    int rc = ops->verify ? ops->verify(state, &err) : MB_ESKIP;
    if (rc == MB_OK) {
        r->verify = MB_VERIFY_PASSED;
        snprintf(r->verify_detail, sizeof r->verify_detail, "%s", err.msg);
    } else if (rc == MB_ESKIP) {
        r->verify = MB_VERIFY_NOT_RUN;
        snprintf(r->verify_detail, sizeof r->verify_detail, "%s",
                 ops->verify ? err.msg : "the component has no verification");
    } else {
        r->verify = MB_VERIFY_FAILED;
        snprintf(r->verify_detail, sizeof r->verify_detail, "%s", err.msg);
        r->status = MB_CASE_FAILED;
        snprintf(r->reason, sizeof r->reason, "verification failed: %.990s", err.msg);
    }
}

/* The work per iteration and the rates it gives: a case whose numbers are
 * not positive and finite fails here, so no table, chart or results file
 * shows an infinite rate (or a null where a rate should be) for an "ok". */
static void check_rates(const mb_component_ops *ops, void *state, mb_record *r)
{
    double work = ops->work_per_iter ? ops->work_per_iter(state) : 0;
    char msg[MB_ERR_LEN];
    if (!(work > 0) || !isfinite(work)) {
        /* The reason keeps the value; the record keeps no rate made of it
         * (NAN: the results file writes null, never a zero or negative rate). */
        r->work_per_iter = NAN;
        if (work == 0)
            snprintf(msg, sizeof msg, "the component reported no work per iteration");
        else
            snprintf(msg, sizeof msg, "the component reported %g %s per iteration: work must be positive "
                     "and finite", work, ops->work_unit);
        set_outcome(r, MB_EFAIL, msg);
        return;
    }
    r->work_per_iter = work;
    mb_stats st;
    /* rate_best is the largest rate: finite means every repetition's is */
    if (!mb_record_stats(r, &st) || !isfinite(st.rate_best) || !(st.rate_median > 0)) {
        snprintf(msg, sizeof msg, "the rate is not a positive finite number (%g %s per iteration in as "
                 "little as %g s): the component's work or time is wrong", work, ops->work_unit, st.spi_min);
        r->work_per_iter = NAN; /* as above: no rate of a repetition is kept */
        set_outcome(r, MB_EFAIL, msg);
    }
}

void mb_run_case(const mb_case *c, const mb_runner_opts *o, mb_record *r)
{
    const mb_component_ops *ops = c->ops;
    mb_record_init(r, c);
    mb_err err = { 0 };
    void *state = NULL;

    int rc = ops->probe ? ops->probe(c->params, &err) : MB_OK;
    if (rc != MB_OK) {
        set_outcome(r, rc, err.msg);
        return;
    }
    if (ops->setup == NULL || ops->run == NULL) {
        set_outcome(r, MB_ESKIP, "backend has no implementation");
        return;
    }
    /* A collective blocks forever on a dead peer: the watchdog ends us. */
    if (ops->collective)
        mb_dist_watchdog_arm();
    rc = ops->setup(c->params, &state, &err);
    if (rc != MB_OK) {
        set_outcome(r, rc == MB_ESKIP ? MB_ESKIP : MB_EFAIL, err.msg);
        goto done;
    }
    r->status = MB_CASE_OK;
    time_case(c, o, state, r);
    if (r->status == MB_CASE_OK)
        check_rates(ops, state, r);
    phases_case(c, state, r);
    if (r->status == MB_CASE_OK)
        verify_case(ops, state, r);
    if (ops->report)
        ops->report(state, &r->report);
    /* After the component's own notes: the flag is about the numbers. */
    mb_record_check_noise(r);
done:
    if (ops->teardown)
        ops->teardown(state);
    mb_dist_watchdog_disarm();
}

/* ---- progress ------------------------------------------------------------ */

static void progress_start(const mb_runner_opts *o, int i, int n, const mb_case *c, double elapsed)
{
    if (o->quiet || !isatty(STDERR_FILENO))
        return;
    char el[32];
    mb_fmt_elapsed(el, sizeof el, elapsed);
    char label[384];
    mb_case_label_of(c, label, sizeof label);
    fprintf(stderr, "\r\033[K[%d/%d] %s elapsed, running %s", i + 1, n, el, label);
    fflush(stderr);
}

/* saved: the case is in the results file. A case that could not be saved is
 * still shown (it was measured), but never in the "[i/n] status id:" form
 * that promises it is in the file. */
static void progress_done(const mb_runner_opts *o, int i, int n, const mb_record *r, bool saved,
                          double elapsed)
{
    if (o->quiet)
        return;
    char el[32], left[32];
    mb_fmt_elapsed(el, sizeof el, elapsed);
    mb_fmt_elapsed(left, sizeof left, elapsed / (i + 1) * (n - i - 1));
    char what[256];
    mb_stats st;
    if (r->status == MB_CASE_OK && mb_record_stats(r, &st)) {
        /* the case's one ceiling, as the results file and the table give it */
        const char *source;
        double ceiling = mb_record_ceiling(r, &source);
        char unit[32], num[32];
        mb_fmt_number(num, sizeof num, ceiling);
        snprintf(what, sizeof what, "%s %s %s (cv %.1f%%%s)", num,
                 mb_rate_unit_for_dtype(r->c->ops->rate_unit, mb_param_str_opt(r->c->params, "dtype"), unit,
                                        sizeof unit),
                 source,
                 st.rate_cv * 100, r->noisy ? ", noisy: not a reliable ceiling" : "");
        if (r->burst.measured && r->sustained.measured) {
            char burst[32], sustained[32];
            mb_fmt_number(burst, sizeof burst, r->burst.rate);
            mb_fmt_number(sustained, sizeof sustained, r->sustained.rate);
            size_t used = strlen(what);
            snprintf(what + used, sizeof what - used, "; burst %s, sustained %s", burst, sustained);
        }
    } else {
        /* the reason's first clause ("no usable CUDA device"): the driver's whole message is in the results file
         * and the table, not repeated on every skipped case's line */
        size_t k = strcspn(r->reason, ":");
        snprintf(what, sizeof what, "%.*s", (int)(k < 120 ? k : 120), r->reason);
    }
    bool tty = isatty(STDERR_FILENO);
    char head[512], tail[96];
    /* the case as the table names it (the parameters its job file set): the full id is in the results file */
    char label[384];
    mb_case_label_of(r->c, label, sizeof label);
    int hw = snprintf(head, sizeof head, "[%d/%d] %s%-7s %s:", i + 1, n, saved ? "" : "NOT SAVED: ",
                      r->status == MB_CASE_OK && r->noisy ? "noisy" : mb_case_status_name(r->status), label);
    int tw = snprintf(tail, sizeof tail, "[%s elapsed, ~%s left]", el, left);
    /* within 120 columns where the label allows: what follows a long one goes on its own line */
    bool wrap = hw + 1 + (int)strlen(what) + 1 + tw > 120;
    fprintf(stderr, "%s%s%s%s %s\n", tty ? "\r\033[K" : "", head, wrap ? "\n    " : " ", what, tail);
    fflush(stderr);
}

/* ---- the suite ----------------------------------------------------------- */

static int journal_case(const mb_runner_opts *o, mb_journal *j, cJSON *case_json, mb_err *err)
{
    if (!mb_dist_active())
        return mb_journal_append(j, case_json, err);
    cJSON *all = mb_dist_gather_json(case_json, o->dist_timeout, err);
    if (mb_dist_rank() != 0) {
        cJSON_Delete(case_json);
        return err->code;
    }
    if (all)
        mb_dist_fleet_merge(case_json, all, o->fleet_margin);
    cJSON_Delete(all);
    int gathered = err->code;
    /* Keep what was measured, then stop every rank: a rank that does not
     * answer would make the next collective hang. */
    mb_err jerr = { 0 };
    int rc = mb_journal_append(j, case_json, &jerr);
    if (gathered != MB_OK)
        mb_dist_abort(err->msg);
    if (rc != MB_OK)
        mb_errf(err, rc, "%s", jerr.msg);
    return rc;
}

int mb_run_suite(const mb_suite *s, const mb_runner_opts *o, mb_journal *j, mb_run_summary *sum,
                 mb_err *err)
{
    memset(sum, 0, sizeof *sum);
    double start = mb_now();
    for (int i = 0; i < s->n_cases; i++) {
        const mb_case *c = &s->cases[i];
        if (mb_dist_active() && c->ops->collective &&
            mb_dist_barrier(o->dist_timeout, err) != MB_OK)
            return err->code;
        progress_start(o, i, s->n_cases, c, mb_now() - start);
        mb_record r;
        mb_run_case(c, o, &r);
        if (r.status == MB_CASE_OK)
            sum->ok++;
        else if (r.status == MB_CASE_SKIPPED)
            sum->skipped++;
        else
            sum->failed++;
        /* Saved before it is announced: a case the progress shows as
         * finished is in the results file, whatever ends the run next. */
        cJSON *cj = mb_record_to_json(&r);
        int rc = journal_case(o, j, cj, err);
        progress_done(o, i, s->n_cases, &r, rc == MB_OK, mb_now() - start);
        mb_record_free(&r);
        if (rc != MB_OK)
            return err->code;
    }
    return MB_OK;
}
