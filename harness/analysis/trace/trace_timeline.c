/* trace_timeline.c: which timeline cuts a trace's steps (trace.h,
 * mb_tr_timeline). A loop that never synchronises inside a step (no
 * .item(), no torch.cuda.synchronize) lets the host run ahead: a
 * ProfilerStep window on the host's timeline then holds the launches of its
 * step and the kernels of earlier ones, and the profiler's closing
 * synchronize lands in the last window. Such steps are cut on the GPU's
 * timeline instead: each kernel belongs to the step whose host code
 * launched it (by correlation id), and step k runs on the GPU from the end
 * of step k-1's GPU work to the end of its own. Shared by the step table
 * (trace_analysis.c) and the projection's re-lay (project_trace.c), so both
 * cut the same steps. docs/traces.md, "The step table". */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

/* A kernel that starts more than this after its launch call returned was
 * queued behind earlier GPU work: the GPU was busy before it. */
#define QUEUED_NS INT64_C(50000)

static int cmp_call_corr(const void *a, const void *b)
{
    const tr_call *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

long mb_tr_window_of(const int64_t *steps, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[2 * mid] <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ts < steps[2 * (lo - 1) + 1] ? (long)(lo - 1) : -1;
}

static const tr_call *call_of(const tr_call *sorted, size_t n, int64_t corr)
{
    if (corr < 0 || n == 0)
        return NULL;
    tr_call key = { .corr = corr };
    return bsearch(&key, sorted, n, sizeof *sorted, cmp_call_corr);
}

/* The head of a later step: from the end of the previous step's GPU work
 * to the first GPU event of its own, the GPU's idle time there (the part of
 * the host's time between steps that the GPU's work does not cover), or,
 * negative, how long before that end its first event started (a prefetch
 * copy on a side stream, beside the previous step's kernels). The median
 * over steps 1.. in *head; false with one step (or out of memory). */
static bool later_heads(const int64_t *first, const int64_t *last_end, size_t n, int64_t *head)
{
    if (n < 2)
        return false;
    int64_t *h = malloc(sizeof *h * (n - 1));
    if (h == NULL)
        return false;
    size_t m = 0;
    for (size_t k = 1; k < n; k++)
        if (first[k] != INT64_MAX && last_end[k - 1] != INT64_MIN)
            h[m++] = first[k] - last_end[k - 1];
    if (m > 0) /* a whole ns: the mean of the middle two cut toward zero, as tests/trace_check.py does */
        *head = (int64_t)mb_tr_median_i64(h, m);
    free(h);
    return m > 0;
}

/* Where step 0 starts on the GPU: where its first GPU event started when
 * that event waited behind earlier GPU work (recorded or not), else where
 * the GPU was free to run it: the end of the GPU work before it, when that
 * ran into the step. With no GPU work before it at all, where the step
 * before it would have ended: its first GPU event less the later steps'
 * head (`head`, the median; known: has_head), at its ProfilerStep's start at
 * the earliest and before its own GPU work's end (`end`). The host's time
 * before that is a first step's lead-in, which every later step's runs
 * under the previous step's GPU work: left out (*lead_in), never making
 * step 0 shorter than the shortest later step (`shortest`). t4_matmulk's three
 * steps: step 0 held its 11.6 ms of host preparation, a mean of 14.6 ms
 * against later steps of 11.3 and 11.9; a loop waiting on its DataLoader
 * keeps the wait in every step; HTA's 16-rank A100 trace prefetches each
 * batch on a side stream 159 ms before the step before ends (its step 0 read
 * 368 ms beside 215). */
static int64_t first_start(const int64_t *steps, const tr_gpu_span *spans, size_t ns, const tr_call *calls,
                           size_t nl, const long *step_at, bool has_head, int64_t head, int64_t end,
                           int64_t shortest, int64_t *lead_in)
{
    size_t first = ns;
    for (size_t i = 0; i < ns; i++)
        if (step_at[i] == 0 && (first == ns || spans[i].start < spans[first].start))
            first = i;
    const tr_gpu_span *f = &spans[first];
    const tr_call *c = call_of(calls, nl, f->corr);
    bool queued = c && f->start > c->end + QUEUED_NS;
    int64_t free_at = steps[0];
    for (size_t i = 0; i < ns && !queued; i++)
        if (spans[i].start < f->start && spans[i].end > free_at)
            free_at = spans[i].end;
    /* without the later steps: queued behind work the trace does not hold, the GPU was busy until its first
     * event; else free from the end of the work before it, or from the step's start */
    int64_t base = queued ? f->start : free_at > steps[0] ? (free_at < f->start ? free_at : f->start) : steps[0];
    int64_t at = base;
    if (has_head && head < 0 && f->start - head > at) /* the step before ends after its successor's first event */
        at = f->start - head;
    else if (has_head && head >= 0 && !queued && free_at == steps[0] && f->start - head > at)
        at = f->start - head; /* nothing before it: the host's lead-in, less what later steps' GPU idles at their head */
    /* never shorter than the shortest later step: a loop whose host gets further ahead each step (its heads
     * growing more negative) would cut step 0 to less than any step runs */
    if (at > base && shortest > 0 && end - at < shortest)
        at = end - shortest > base ? end - shortest : base;
    if (at >= end) /* no window left */
        at = base;
    *lead_in = at - base;
    return at;
}

bool mb_tr_timeline(const int64_t *steps, size_t n, const tr_call *launches, size_t nl, const tr_gpu_span *spans,
                    size_t ns, tr_timeline *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0 || ns == 0)
        return true;
    tr_call *calls = malloc(sizeof *calls * (nl ? nl : 1));
    long *step_at = malloc(sizeof *step_at * ns);
    int64_t *last_end = malloc(sizeof *last_end * n), *first = malloc(sizeof *first * n);
    out->win = malloc(sizeof *out->win * 2 * n);
    if (calls == NULL || step_at == NULL || last_end == NULL || first == NULL || out->win == NULL) {
        free(calls);
        free(step_at);
        free(last_end);
        free(first);
        free(out->win);
        out->win = NULL;
        return false;
    }
    if (nl)
        memcpy(calls, launches, sizeof *calls * nl);
    qsort(calls, nl, sizeof *calls, cmp_call_corr);
    for (size_t k = 0; k < n; k++) {
        last_end[k] = INT64_MIN;
        first[k] = INT64_MAX;
    }
    for (size_t i = 0; i < ns; i++) {
        const tr_call *c = call_of(calls, nl, spans[i].corr);
        step_at[i] = c ? mb_tr_window_of(steps, n, c->ts) : -1;
        if (step_at[i] >= 0 && spans[i].end > last_end[step_at[i]])
            last_end[step_at[i]] = spans[i].end;
        if (step_at[i] >= 0 && spans[i].start < first[step_at[i]])
            first[step_at[i]] = spans[i].start;
        if (c && step_at[i] >= 0 && c->ts > out->last_launch)
            out->last_launch = c->ts;
    }
    /* The host runs ahead when most steps' GPU work ends after their window
     * (by more than 1% of it and 10 us: a kernel finishing as prof.step()
     * returns is not running ahead). A step without GPU work keeps the
     * host's timeline: there is nothing to cut it on. */
    bool all_work = true;
    int64_t over_sum = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t len = steps[2 * k + 1] - steps[2 * k], tol = len / 100 > 10000 ? len / 100 : 10000;
        if (last_end[k] == INT64_MIN) {
            all_work = false;
            continue;
        }
        if (last_end[k] > steps[2 * k + 1] + tol) {
            out->overrun++;
            over_sum += last_end[k] - steps[2 * k + 1];
        }
    }
    out->overrun_mean_ns = out->overrun ? over_sum / out->overrun : 0;
    out->gpu = all_work && 2 * (size_t)out->overrun >= n;
    int64_t head = 0, shortest = 0;
    bool has_head = out->gpu && later_heads(first, last_end, n, &head);
    for (size_t k = 1; out->gpu && k < n; k++) /* the later steps' windows, as cut below */
        if (last_end[k] - last_end[k - 1] > 0 && (shortest == 0 || last_end[k] - last_end[k - 1] < shortest))
            shortest = last_end[k] - last_end[k - 1];
    int64_t at = out->gpu ? first_start(steps, spans, ns, calls, nl, step_at, has_head, head, last_end[0],
                                         shortest, &out->lead_in_ns)
                          : 0;
    for (size_t k = 0; out->gpu && k < n; k++) {
        int64_t end = last_end[k] > at ? last_end[k] : at;
        if (end <= at) /* this step's work ended inside the previous one's: no window to cut */
            out->gpu = false;
        out->win[2 * k] = at;
        out->win[2 * k + 1] = end;
        at = end;
    }
    if (!out->gpu) {
        memcpy(out->win, steps, sizeof *out->win * 2 * n);
        out->lead_in_ns = 0;
    }
    free(calls);
    free(step_at);
    free(last_end);
    free(first);
    return true;
}

void mb_tr_timeline_free(tr_timeline *t)
{
    free(t->win);
    t->win = NULL;
}
