/* hostmem_stream.c: STREAM-style host memory bandwidth (copy, scale, add,
 * triad) across the cores.
 *
 * Written by hand on purpose: STREAM itself is a program, not a library, and
 * its kernels are four loops. What is kept from it: its kernels and scalar
 * (3.0), its byte counting (copy and scale move 2 x 8 x N bytes, add and
 * triad 3 x 8 x N; write-allocate traffic is not counted), arrays of at least
 * 4x the last-level caches, and a check of every element.
 *
 * Threads: `threads` persistent workers, each pinned to one CPU of the
 * process's affinity mask, own a contiguous slice of every array and
 * initialise it themselves (first touch places the pages on their NUMA node).
 * One run() releases them through a barrier; the timed region is from the
 * earliest worker start to the latest worker end, so thread creation and the
 * barrier's own wake-up of the main thread are not timed. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component.h"
#include "cpu_info.h"
#include "cpu_test_hooks.h"
#include "host.h"
#include "hostmem_util.h"

#define STREAM_SCALAR 3.0
/* Relative tolerance of the element check: the kernels are one or two
 * operations, so only an FMA contraction (1 ulp) can make them differ from
 * the reference; a wrong or missing write is off by O(1). */
#define STREAM_REL_TOL 1e-14

typedef enum stream_kernel { K_COPY, K_SCALE, K_ADD, K_TRIAD } stream_kernel;
typedef enum stream_cmd { CMD_INIT, CMD_RUN, CMD_VERIFY, CMD_EXIT } stream_cmd;

static const char *const kernel_names[] = { "copy", "scale", "add", "triad" };
static const char *const kernel_formulas[] = {
    "c[i] = a[i]", "b[i] = 3.0*c[i]", "c[i] = a[i] + b[i]", "a[i] = b[i] + 3.0*c[i]"
};
/* Arrays a kernel touches, as STREAM counts its bytes. */
static const int kernel_arrays[] = { 2, 2, 3, 3 };

/* A reusable barrier on a mutex and a condition variable: unlike
 * pthread_barrier_t its count can shrink, which lets setup release the
 * workers it did start when creating a later one fails. Sleeping (not
 * spinning) between iterations leaves the CPUs to the harness. */
typedef struct barrier {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count, waiting;
    unsigned generation;
} barrier;

static void barrier_wait(barrier *b)
{
    pthread_mutex_lock(&b->mu);
    unsigned gen = b->generation;
    if (++b->waiting >= b->count) {
        b->waiting = 0;
        b->generation++;
        pthread_cond_broadcast(&b->cv);
    } else {
        while (gen == b->generation)
            pthread_cond_wait(&b->cv, &b->mu);
    }
    pthread_mutex_unlock(&b->mu);
}

typedef struct stream_state stream_state;

typedef struct worker {
    stream_state *st;
    pthread_t tid;
    int cpu;            /* pinned to, -1 when pinning failed */
    size_t lo, hi;      /* element range [lo, hi) */
    double t_start, t_end;
    size_t bad;         /* CMD_VERIFY: elements that differ */
    size_t first_bad;
    double got, want;   /* at first_bad */
} worker;

struct stream_state {
    stream_kernel kernel;
    size_t n;           /* elements per array */
    size_t map_bytes;   /* mapping length per array */
    double *a, *b, *c;
    int nthreads, started;
    bool pinned_all;
    worker *workers;
    barrier start, done;
    stream_cmd cmd;
    long long llc_bytes;
    bool ran;
};

/* ---- per-slice work (runs on the workers) ----------------------------------- */

/* Inputs in [1, 2), outputs in [-2, -1): never zero, and a kernel that skips
 * its writes leaves values its check cannot mistake for results. */
static void fill(double *x, size_t lo, size_t hi, uint64_t seed, double base)
{
    if (x == NULL)
        return;
    uint64_t s = seed ^ (lo * 0x9E3779B97F4A7C15ull);
    for (size_t i = lo; i < hi; i++)
        x[i] = base + 0.5 * (mb_rand_unit(&s) + 1.0);
}

static void init_slice(stream_state *st, size_t lo, size_t hi)
{
    double in = 1.0, out = -2.0;
    fill(st->a, lo, hi, 0xA, st->kernel == K_TRIAD ? out : in);
    fill(st->b, lo, hi, 0xB, st->kernel == K_SCALE ? out : in);
    fill(st->c, lo, hi, 0xC, st->kernel == K_COPY || st->kernel == K_ADD ? out : in);
}

static void run_slice(stream_kernel k, double *restrict a, double *restrict b,
                      double *restrict c, size_t lo, size_t hi)
{
    const double q = STREAM_SCALAR;
    switch (k) {
    case K_COPY:
        for (size_t i = lo; i < hi; i++)
            c[i] = a[i];
        break;
    case K_SCALE:
        for (size_t i = lo; i < hi; i++)
            b[i] = q * c[i];
        break;
    case K_ADD:
        for (size_t i = lo; i < hi; i++)
            c[i] = a[i] + b[i];
        break;
    case K_TRIAD:
        for (size_t i = lo; i < hi; i++)
            a[i] = b[i] + q * c[i];
        break;
    }
}

/* The expected output element and the output array of a kernel. */
static double expected(const stream_state *st, size_t i)
{
    switch (st->kernel) {
    case K_COPY: return st->a[i];
    case K_SCALE: return STREAM_SCALAR * st->c[i];
    case K_ADD: return st->a[i] + st->b[i];
    case K_TRIAD: return st->b[i] + STREAM_SCALAR * st->c[i];
    }
    return 0.0;
}

static double *output_of(const stream_state *st)
{
    switch (st->kernel) {
    case K_COPY: return st->c;
    case K_SCALE: return st->b;
    case K_ADD: return st->c;
    case K_TRIAD: return st->a;
    }
    return NULL;
}

static void verify_slice(stream_state *st, worker *w)
{
    const double *out = output_of(st);
    w->bad = 0;
    for (size_t i = w->lo; i < w->hi; i++) {
        double want = expected(st, i);
        if (fabs(out[i] - want) <= STREAM_REL_TOL * fabs(want))
            continue;
        if (w->bad++ == 0) {
            w->first_bad = i;
            w->got = out[i];
            w->want = want;
        }
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    stream_state *st = w->st;
    for (;;) {
        barrier_wait(&st->start);
        stream_cmd cmd = st->cmd; /* written before the barrier: visible */
        if (cmd == CMD_EXIT)
            break;
        w->t_start = mb_now();
        if (cmd == CMD_INIT)
            init_slice(st, w->lo, w->hi);
        else if (cmd == CMD_RUN)
            run_slice(st->kernel, st->a, st->b, st->c, w->lo, w->hi);
        else
            verify_slice(st, w);
        w->t_end = mb_now();
        barrier_wait(&st->done);
    }
    return NULL;
}

/* One command on every worker; returns after all finished it. */
static void broadcast(stream_state *st, stream_cmd cmd)
{
    st->cmd = cmd;
    barrier_wait(&st->start);
    if (cmd != CMD_EXIT)
        barrier_wait(&st->done);
}

/* ---- ops --------------------------------------------------------------------- */

static stream_kernel kernel_from(const char *name)
{
    for (int k = 0; k < 4; k++)
        if (strcmp(name, kernel_names[k]) == 0)
            return (stream_kernel)k;
    return K_TRIAD;
}

/* Threads the case asks for, or -1 with MB_ESKIP when there are fewer CPUs
 * than that. STREAM starts its own threads, so 0 means every CPU we may use
 * (the BLAS backends' 0 is their library's default instead). */
static int resolve_threads(const mb_params *p, mb_err *err)
{
    return mb_cpu_threads_for((int)mb_param_int(p, "threads"), mb_cpu_allowed(NULL, 0), err);
}

static int stream_probe(const mb_params *p, mb_err *why)
{
    if (p == NULL)
        return MB_OK;
    if (resolve_threads(p, why) < 0)
        return MB_ESKIP;
    stream_kernel k = kernel_from(mb_param_str(p, "kernel"));
    long long bytes = mb_hostmem_array_bytes(mb_param_int(p, "array_size"), NULL);
    return mb_hostmem_fits(kernel_arrays[k], bytes, why);
}

static void stream_teardown(void *state);

static int map_arrays(stream_state *st, mb_err *err)
{
    double **arrays[3] = { &st->a, &st->b, &st->c };
    /* copy never touches b, scale never touches a */
    bool used[3] = { st->kernel != K_SCALE, st->kernel != K_COPY, true };
    for (int i = 0; i < 3; i++) {
        if (!used[i])
            continue;
        *arrays[i] = mb_hostmem_map(st->map_bytes, err);
        if (*arrays[i] == NULL)
            return err ? err->code : MB_ESYS;
    }
    return MB_OK;
}

/* Contiguous slices, boundaries on 64-byte lines so no two workers share a
 * cache line. */
static void split(stream_state *st)
{
    size_t lines = (st->n + 7) / 8;
    for (int t = 0; t < st->nthreads; t++) {
        size_t lo = lines * (size_t)t / (size_t)st->nthreads * 8;
        size_t hi = lines * (size_t)(t + 1) / (size_t)st->nthreads * 8;
        st->workers[t].lo = lo < st->n ? lo : st->n;
        st->workers[t].hi = hi < st->n ? hi : st->n;
    }
}

static int start_workers(stream_state *st, const int *cpus, mb_err *err)
{
    st->pinned_all = true;
    for (int t = 0; t < st->nthreads; t++) {
        worker *w = &st->workers[t];
        w->st = st;
        w->cpu = cpus[t];
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[t], &set);
        /* Pinned from birth so first touch happens on the final CPU. */
        if (pthread_attr_setaffinity_np(&attr, sizeof set, &set) != 0) {
            w->cpu = -1;
            st->pinned_all = false;
        }
        int rc = pthread_create(&w->tid, &attr, worker_main, w);
        if (rc != 0 && w->cpu >= 0) { /* a cgroup may refuse the CPU: go unpinned */
            pthread_attr_destroy(&attr);
            pthread_attr_init(&attr);
            w->cpu = -1;
            st->pinned_all = false;
            rc = pthread_create(&w->tid, &attr, worker_main, w);
        }
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            /* Shrink the barrier to the workers that exist, so teardown can
             * release them (none of them is waiting on `done`). */
            pthread_mutex_lock(&st->start.mu);
            st->start.count = st->started + 1;
            pthread_mutex_unlock(&st->start.mu);
            return mb_errf(err, MB_ESYS, "pthread_create (worker %d of %d): %s", t,
                           st->nthreads, strerror(rc));
        }
        st->started++;
    }
    return MB_OK;
}

static void barrier_init(barrier *b, int count)
{
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->count = count;
    b->waiting = 0;
    b->generation = 0;
}

static int stream_setup(const mb_params *p, void **state, mb_err *err)
{
    int rc, *cpus = NULL;
    int nthreads = resolve_threads(p, err);
    if (nthreads < 0)
        return MB_ESKIP;
    stream_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = st;
    st->kernel = kernel_from(mb_param_str(p, "kernel"));
    long long bytes = mb_hostmem_array_bytes(mb_param_int(p, "array_size"), &st->llc_bytes);
    if ((rc = mb_hostmem_fits(kernel_arrays[st->kernel], bytes, err)) != MB_OK)
        goto fail;
    st->n = (size_t)bytes / sizeof(double);
    if (st->n < (size_t)nthreads * 8) {
        rc = mb_errf(err, MB_EUSAGE, "parameter array_size: %lld bytes is too small for %d "
                     "threads (at least 64 bytes per thread)", bytes, nthreads);
        goto fail;
    }
    st->map_bytes = st->n * sizeof(double);
    st->nthreads = nthreads;
    barrier_init(&st->start, nthreads + 1);
    barrier_init(&st->done, nthreads + 1);
    st->workers = calloc((size_t)nthreads, sizeof *st->workers);
    int allowed = mb_cpu_allowed(NULL, 0);
    cpus = calloc((size_t)allowed, sizeof *cpus);
    if (st->workers == NULL || cpus == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    if ((rc = map_arrays(st, err)) != MB_OK)
        goto fail;
    split(st);
    mb_cpu_allowed(cpus, allowed);
    if ((rc = start_workers(st, cpus, err)) != MB_OK)
        goto fail;
    free(cpus);
    broadcast(st, CMD_INIT);
    return MB_OK;
fail:
    free(cpus);
    stream_teardown(st);
    *state = NULL;
    return rc;
}

static int stream_run(void *state, double *seconds, mb_err *err)
{
    (void)err;
    stream_state *st = state;
    broadcast(st, CMD_RUN);
    double t0 = st->workers[0].t_start, t1 = st->workers[0].t_end;
    for (int t = 1; t < st->nthreads; t++) {
        if (st->workers[t].t_start < t0)
            t0 = st->workers[t].t_start;
        if (st->workers[t].t_end > t1)
            t1 = st->workers[t].t_end;
    }
    *seconds = t1 - t0;
    st->ran = true;
    return MB_OK;
}

static double stream_work(void *state)
{
    stream_state *st = state;
    return (double)kernel_arrays[st->kernel] * (double)sizeof(double) * (double)st->n;
}

static int stream_verify(void *state, mb_err *err)
{
    stream_state *st = state;
    if (!st->ran)
        return mb_errf(err, MB_ESKIP, "no iteration ran");
    broadcast(st, CMD_VERIFY);
    size_t bad = 0;
    const worker *first = NULL;
    for (int t = 0; t < st->nthreads; t++) {
        bad += st->workers[t].bad;
        if (first == NULL && st->workers[t].bad > 0)
            first = &st->workers[t];
    }
    if (bad == 0)
        return MB_OK;
    return mb_errf(err, MB_EVERIFY, "%s (%s): %zu of %zu elements wrong; first at [%zu]: %.17g, "
                   "expected %.17g", kernel_names[st->kernel], kernel_formulas[st->kernel], bad,
                   st->n, first->first_bad, first->got, first->want);
}

static void stream_report(void *state, mb_report *r)
{
    stream_state *st = state;
    mb_report_metric(r, "threads", st->nthreads, "");
    mb_report_metric(r, "array_bytes", (double)st->n * sizeof(double), "B");
    mb_report_metric(r, "llc_total_bytes", (double)st->llc_bytes, "B");
    mb_report_info(r, "kernel", kernel_formulas[st->kernel]);
    mb_report_info(r, "bytes_counted", kernel_arrays[st->kernel] == 2
                       ? "2 x 8 x N (STREAM: read + write, write-allocate not counted)"
                       : "3 x 8 x N (STREAM: 2 reads + write, write-allocate not counted)");
    mb_report_info(r, "transparent_hugepages", mb_thp_mode());
    if (!st->pinned_all)
        mb_report_note(r, "some workers could not be pinned to a CPU: they float");
    if (st->llc_bytes > 0 && (double)st->n * sizeof(double) < 4.0 * (double)st->llc_bytes)
        mb_report_note(r, "arrays of %.1f MiB are below 4x the %.1f MiB of last-level cache: "
                       "this measures caches, not DRAM",
                       (double)st->n * sizeof(double) / 1048576.0, st->llc_bytes / 1048576.0);
    if (st->llc_bytes <= 0)
        mb_report_note(r, "last-level cache size unknown: arrays sized %.0f MiB by default",
                       (double)st->n * sizeof(double) / 1048576.0);
}

static void stream_teardown(void *state)
{
    stream_state *st = state;
    if (st == NULL)
        return;
    if (st->started > 0) {
        broadcast(st, CMD_EXIT);
        for (int t = 0; t < st->started; t++)
            pthread_join(st->workers[t].tid, NULL);
    }
    if (st->workers != NULL) {
        pthread_mutex_destroy(&st->start.mu);
        pthread_cond_destroy(&st->start.cv);
        pthread_mutex_destroy(&st->done.mu);
        pthread_cond_destroy(&st->done.cv);
    }
    mb_hostmem_unmap(st->a, st->map_bytes);
    mb_hostmem_unmap(st->b, st->map_bytes);
    mb_hostmem_unmap(st->c, st->map_bytes);
    free(st->workers);
    free(st);
}

/* Test hook (cpu_test_hooks.h): damages one output element. */
void mb_test_stream_corrupt(void *state, size_t index)
{
    stream_state *st = state;
    double *out = output_of(st);
    out[index % st->n] += 1.0;
}

const mb_backend_code mb_hostmem_stream = {
    .component = "hostmem",
    .backend = "stream",
    .probe = stream_probe,
    .setup = stream_setup,
    .run = stream_run,
    .work_per_iter = stream_work,
    .verify = stream_verify,
    .report = stream_report,
    .teardown = stream_teardown,
};
