/* trace_cpu.c: the stages of a CPU-only training run from its trace.
 *
 * A trace without GPU events (Debian's python3-torch, built without Kineto,
 * or a CPU-only Kineto run) still records the host's ops: aten matmuls and
 * convolutions, the optimizer's record_function, DataLoader and collective
 * annotations, ProfilerStep windows. Each class's time inside the steps is
 * counted once, by priority (data loading, collective, optimizer, conv,
 * matmul, memory-bound ops, other aten ops), so the stages add up to the
 * step; what no op covers is the Python around them. Matmul/conv stages
 * carry their FLOPs when shapes were recorded and are matched to the CPU
 * GEMM/conv ceilings;
 * memory-bound ops whose shapes gave their bytes ([memory_op]: elementwise,
 * softmax, normalization, reductions) carry them against host memory. */
#include "trace.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "formulas.h"
#include "gap.h"
#include "grow.h"
#include "vocabulary.h"

static const char *const cpu_class_names[TR_CPU_N] = { "conv (cpu)", "gemm (cpu)", "optimizer",
                                                        "memory-bound ops (cpu)", "other aten ops",
                                                        "collective (host)" };
/* The same classes in a GPU run whose GPU activity was not recorded: the
 * ops ran on the GPU, their time is the host's (not "conv (cpu)"). */
static const char *const unrecorded_class_names[TR_CPU_N] = { "conv ops (host time)", "gemm ops (host time)",
                                                               "optimizer", "memory-bound ops (host time)",
                                                               "other aten ops", "collective (host)" };

/* Which class a host event belongs to, or -1. `op`: a cpu_op event, whose
 * name in an extension's namespace (_C::, vllm::, torchvision::) is an op
 * too, not Python; an annotation so named may enclose ops and Python. */
static int cpu_class(const tr_state *st, const char *name, size_t len, bool mem_bytes, bool op)
{
    if (strncmp(name, "Optimizer.", 10) == 0)
        return TR_CPU_OPT; /* Optimizer.step#SGD.step, Optimizer.zero_grad#SGD.zero_grad */
    if (mb_tr_classify(st->rules, TR_SET_ANNOTATION, name, len) == TR_ANN_COLLECTIVE)
        return TR_CPU_COLL;
    int kind = mb_tr_op_kind(name);
    if (kind == TR_OP_CONV)
        return TR_CPU_CONV;
    if (kind == TR_OP_GEMM)
        return TR_CPU_GEMM;
    if (mem_bytes)
        return TR_CPU_MEM;
    if (strncmp(name, "aten::", 6) == 0 || strncmp(name, "mkldnn", 6) == 0)
        return TR_CPU_OPS;
    if (op && strstr(name, "::") != NULL)
        return TR_CPU_OPS;
    return -1;
}

static size_t merge(int64_t *iv, size_t n);
static bool add_interval(tr_ivlist *l, int64_t ts, int64_t dur);

/* An embedding's dense backward: it zeroes a gradient the size of the whole
 * table every step and adds the looked-up rows into it (a recommender's
 * EmbeddingBag of 200000 x 64 rows: 87% of its CPU step, mostly that fill_),
 * where sparse=True writes only the rows a batch touched. */
static bool dense_embedding(const char *name, size_t len)
{
    static const char *const names[] = { "aten::embedding_dense_backward", "aten::_embedding_bag_dense_backward" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (len == strlen(names[i]) && memcmp(name, names[i], len) == 0)
            return true;
    return false;
}

bool mb_tr_cpu_coll_add(tr_state *st, const tr_host_coll *c)
{
    if (st->n_devices > 0) { /* a GPU run: its collectives are the NCCL kernels */
        free(st->host_colls);
        st->host_colls = NULL;
        st->n_host_colls = st->cap_host_colls = 0;
        return true;
    }
    if (st->n_host_colls == st->cap_host_colls) {
        size_t cap = st->cap_host_colls ? st->cap_host_colls * 2 : 64;
        tr_host_coll *g = realloc(st->host_colls, cap * sizeof *g);
        if (g == NULL)
            return false;
        st->host_colls = g;
        st->cap_host_colls = cap;
    }
    st->host_colls[st->n_host_colls++] = *c;
    return true;
}

/* A range of the loop's own (record_function("aug::python_mixup")), kept
 * by name: a step's long stretch with no op inside one is named by it (4.26
 * of a step's 4.64 ms of Python lay in one, and the remedy read "find them
 * (py-spy)"). Not the profiler's steps, DataLoader, optimizer or autograd
 * ranges, which are no user's code. */
static bool user_range(tr_state *st, const char *name, size_t len, int64_t ts, int64_t dur)
{
    static const char *const theirs[] = { "ProfilerStep#", "enumerate(DataLoader)", "Optimizer.", "autograd::",
                                          "torch::autograd::", "cudaDeviceSynchronize" };
    if (len == 0 || len >= sizeof st->user_ranges[0].name || memmem(name, len, "Backward", 8) != NULL)
        return true;
    for (size_t i = 0; i < sizeof theirs / sizeof *theirs; i++)
        if (len >= strlen(theirs[i]) && strncmp(name, theirs[i], strlen(theirs[i])) == 0)
            return true;
    int k = 0;
    while (k < st->n_user_ranges && !(strlen(st->user_ranges[k].name) == len &&
                                      memcmp(st->user_ranges[k].name, name, len) == 0))
        k++;
    if (k == st->n_user_ranges) {
        if (k == TR_USER_RANGES)
            return true; /* more names than kept: the first ones are */
        memcpy(st->user_ranges[k].name, name, len);
        st->user_ranges[k].name[len] = '\0';
        st->n_user_ranges++;
    }
    return add_interval(&st->user_ranges[k].iv, ts, dur);
}

bool mb_tr_cpu_fold(tr_state *st, const char *name, size_t len, int64_t ts, int64_t dur, bool mem_bytes,
                    bool mem_named, bool op)
{
    /* Only a run without GPU events uses these (mb_tr_cpu_stages): once one is
     * seen, the reader's memory stays per GPU event, not per host op. */
    if (st->n_devices > 0) {
        for (int k = 0; k < TR_CPU_N; k++) {
            free(st->cpu_iv[k].iv);
            st->cpu_iv[k] = (tr_ivlist){ 0 };
        }
        free(st->cpu_backward.iv);
        st->cpu_backward = (tr_ivlist){ 0 };
        free(st->cpu_dense_embedding.iv);
        st->cpu_dense_embedding = (tr_ivlist){ 0 };
        for (int k = 0; k < st->n_user_ranges; k++)
            free(st->user_ranges[k].iv.iv);
        st->n_user_ranges = 0;
        free(st->cpu_mem_unsized.iv);
        st->cpu_mem_unsized = (tr_ivlist){ 0 };
        return true;
    }
    static const char backward[] = "autograd::engine::evaluate_function";
    if (len >= sizeof backward - 1 && strncmp(name, backward, sizeof backward - 1) == 0)
        return add_interval(&st->cpu_backward, ts, dur);
    if (dense_embedding(name, len) && !add_interval(&st->cpu_dense_embedding, ts, dur))
        return false;
    int c = cpu_class(st, name, len, mem_bytes, op);
    if (c < 0 && !op)
        return user_range(st, name, len, ts, dur);
    if (c < 0)
        return true;
    if (c == TR_CPU_OPS && mem_named) { /* which class takes it is known at the end (mb_tr_cpu_stages) */
        st->cpu_mem_unsized_count++;
        return add_interval(&st->cpu_mem_unsized, ts, dur);
    }
    st->cpu_count[c]++;
    return add_interval(&st->cpu_iv[c], ts, dur);
}

/* Appends [ts, ts + dur) to l; nested or back-to-back events (linear ->
 * addmm) extend the last interval. */
static bool add_interval(tr_ivlist *l, int64_t ts, int64_t dur)
{
    if (l->n > 0 && ts >= l->iv[2 * l->n - 2] && ts <= l->iv[2 * l->n - 1]) {
        if (ts + dur > l->iv[2 * l->n - 1])
            l->iv[2 * l->n - 1] = ts + dur;
        return true;
    }
    if (l->n * 2 + 2 > l->cap && l->n >= (1u << 16))
        l->n = merge(l->iv, l->n); /* a long CPU-only trace: merge before growing */
    if (!mb_grow((void **)&l->iv, &l->cap, l->n * 2 + 2, sizeof *l->iv))
        return false;
    l->iv[l->n * 2] = ts;
    l->iv[l->n * 2 + 1] = ts + dur;
    l->n++;
    return true;
}

/* ---- interval arithmetic on [start, end) pairs --------------------------- */

/* Sorts and merges in place; returns the new count. */
static size_t merge(int64_t *iv, size_t n)
{
    return mb_tr_merge_intervals(iv, n);
}

/* Length of the intersection of two merged lists. */
static int64_t overlap(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    return mb_tr_intersection(a, na, b, nb);
}

/* The merged list x less the merged list y, into out (room for nx + ny
 * pairs: each interval of y splits at most one of x in two); the count. */
static size_t subtract(const int64_t *x, size_t nx, const int64_t *y, size_t ny, int64_t *out)
{
    size_t n = 0, j = 0;
    for (size_t i = 0; i < nx; i++) {
        int64_t s = x[2 * i], e = x[2 * i + 1];
        while (j < ny && y[2 * j + 1] <= s)
            j++;
        for (size_t k = j; s < e; k++) {
            if (k >= ny || y[2 * k] >= e) {
                out[2 * n] = s;
                out[2 * n + 1] = e;
                n++;
                break;
            }
            if (y[2 * k] > s) {
                out[2 * n] = s;
                out[2 * n + 1] = y[2 * k];
                n++;
            }
            if (y[2 * k + 1] > s)
                s = y[2 * k + 1];
        }
    }
    return n;
}

/* How much of [a, b) the merged list covers (binary search: one call per op). */
static int64_t covered(int64_t a, int64_t b, const int64_t *iv, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first interval that ends after a */
        size_t mid = lo + (hi - lo) / 2;
        if (iv[2 * mid + 1] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t len = 0;
    for (size_t i = lo; i < n && iv[2 * i] < b; i++) {
        int64_t s = iv[2 * i] > a ? iv[2 * i] : a, e = iv[2 * i + 1] < b ? iv[2 * i + 1] : b;
        if (e > s)
            len += e - s;
    }
    return len;
}

/* ---- bytes of leaf memory-bound ops ------------------------------------------ */

/* Whether op i (flop_ops sorted: by thread, then start, outer first)
 * encloses the next op of `kind` that has a count: then it is no leaf. */
static bool encloses_counted(const tr_state *st, size_t i, int kind)
{
    const tr_flop_op *op = &st->flop_ops[i];
    size_t k = i + 1;
    while (k < st->n_flop_ops && (st->flop_ops[k].kind != kind || st->flop_ops[k].flops < 0))
        k++;
    const tr_flop_op *next = k < st->n_flop_ops ? &st->flop_ops[k] : NULL;
    return next && next->thread == op->thread && next->start < op->end;
}

static bool mem_counted(const tr_flop_op *op)
{
    return op->kind == TR_OP_MEM && op->flops >= 0 && op->end > op->start;
}

/* Bytes of the outermost memory-bound ops whose shapes gave them, each what
 * the ops inside it move, or its own bytes where those are under half of
 * them: it did the work itself (log_softmax -> _log_softmax counts once;
 * _embedding_bag's 21.6 MB of rows are not lost to the few bytes of the sub_
 * and fill_ inside it, as taking the innermost ops alone lost them; a wrapper
 * that hands its inputs down, _embedding_bag_backward with its unused
 * max_indices, is its inner ops'), each in the share of its time inside `avail`
 * (the steps less the classes counted before this one: an add_ inside the
 * optimizer is the optimizer's time, so not this stage's bytes); `calls`
 * the outermost ops with time there. False: out of memory. */
static bool mem_op_bytes(tr_state *st, const int64_t *avail, size_t nf, double *bytes, long long *calls)
{
    *bytes = 0;
    *calls = 0;
    mb_tr_sort_flop_ops(st); /* by thread, then start, the outer of two first */
    size_t m = 0;
    for (size_t i = 0; i < st->n_flop_ops; i++)
        m += mem_counted(&st->flop_ops[i]);
    if (m == 0)
        return true;
    size_t *idx = malloc(m * sizeof *idx), *stack = malloc(m * sizeof *stack);
    ptrdiff_t *parent = malloc(m * sizeof *parent);
    double *inner = calloc(m, sizeof *inner);
    bool ok = idx && stack && parent && inner;
    if (!ok)
        goto done;
    for (size_t i = 0, k = 0; i < st->n_flop_ops; i++)
        if (mem_counted(&st->flop_ops[i]))
            idx[k++] = i;
    size_t sp = 0;
    for (size_t k = 0; k < m; k++) { /* each op's enclosing counted op on its thread */
        const tr_flop_op *op = &st->flop_ops[idx[k]];
        while (sp > 0 && (st->flop_ops[idx[stack[sp - 1]]].thread != op->thread ||
                          st->flop_ops[idx[stack[sp - 1]]].end <= op->start))
            sp--;
        parent[k] = sp > 0 ? (ptrdiff_t)stack[sp - 1] : -1;
        stack[sp++] = k;
    }
    for (size_t k = m; k-- > 0;) { /* children come after their parent: theirs are summed first */
        const tr_flop_op *op = &st->flop_ops[idx[k]];
        double own = inner[k] >= 0.5 * op->flops ? inner[k] : op->flops;
        if (parent[k] >= 0) {
            inner[parent[k]] += own;
            continue;
        }
        int64_t in = covered(op->start, op->end, avail, nf);
        if (in <= 0)
            continue;
        *bytes += own * (double)in / (double)(op->end - op->start);
        (*calls)++;
    }
done:
    free(idx);
    free(stack);
    free(parent);
    free(inner);
    return ok;
}

/* ---- FLOPs of leaf matmul/conv ops ------------------------------------------ */

/* FLOPs of the innermost ops of `kind` (linear -> addmm counts once), how
 * many (the stage's calls: conv2d > convolution > _convolution >
 * mkldnn_convolution is one convolution, not the four events that made 3
 * convolutions of 24.9 GFLOP "8.32 GFLOP per call" against the cases) and
 * their dtype when they agree; false when no op of that kind had shapes. */
static bool leaf_flops(tr_state *st, int kind, double *flops, long long *leaves, const char **dtype)
{
    *flops = 0;
    *leaves = 0;
    *dtype = NULL;
    if (st->n_flop_ops == 0)
        return false;
    mb_tr_sort_flop_ops(st);
    int dt = -1;
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        const tr_flop_op *op = &st->flop_ops[i];
        if (op->kind != kind || op->flops < 0) /* ops whose shapes gave no FLOPs are kept too */
            continue;
        if (encloses_counted(st, i, kind))
            continue; /* not a leaf */
        *flops += op->flops;
        (*leaves)++;
        dt = dt == -1 ? op->dtype : (dt == op->dtype ? dt : 0);
    }
    if (dt > 0)
        *dtype = mb_tr_dtype_name(dt);
    return *leaves > 0 && *flops > 0;
}

/* ---- host collectives: calls, bytes, ranks ------------------------------------- */

static int cmp_coll(const void *a, const void *b)
{
    const tr_host_coll *x = a, *y = b;
    if (x->thread != y->thread)
        return (x->thread > y->thread) - (x->thread < y->thread);
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->end < y->end) - (x->end > y->end); /* the enclosing event first */
}

/* The collectives of the step by kind, and whether their size was recorded. */
typedef struct coll_bucket {
    char name[20];
    char dtype[12];  /* "" unknown or mixed */
    bool sized;
    long long calls;
    long long requests; /* the callers' requests of calls counted from their runs */
    double bytes;    /* of the calls' time inside the windows */
    int64_t ns;      /* the calls' time inside the windows, summed over threads */
    int ranks;       /* the largest group size recorded; 0 none */
} coll_bucket;

#define MAX_COLL_BUCKETS 16

static coll_bucket *bucket_of(coll_bucket *b, int *n, const char *name, bool sized)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(b[i].name, name) == 0 && b[i].sized == sized)
            return &b[i];
    if (*n == MAX_COLL_BUCKETS)
        return &b[MAX_COLL_BUCKETS - 1]; /* folded into the last kind */
    coll_bucket *o = &b[(*n)++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    o->sized = sized;
    o->dtype[0] = '?'; /* no call yet */
    return o;
}

/* One call = an outermost collective event of a thread (c10d::allreduce_
 * around record_param_comms around gloo:all_reduce is one all-reduce). Its
 * bytes are those of the sized events inside it that hold no other sized
 * event, so a nest counts its message once and a coalesced call the sum of
 * its parts. Only the call's time inside the windows counts, and its bytes
 * in the same proportion. */
typedef struct coll_call {
    const char *name, *dtype;
    bool sized, runs; /* runs: holds the backend's own event (gloo:...) */
    double bytes;
    int ranks;
    int64_t in;       /* its time inside the windows */
    int64_t dur;
} coll_call;

static coll_call call_at(tr_host_coll *c, size_t i, size_t j, const int64_t *win, size_t nw)
{
    coll_call k = { .name = strcmp(c[i].name, "unknown") != 0 ? c[i].name : NULL, .dtype = c[i].dtype,
                    .ranks = c[i].ranks, .dur = c[i].end - c[i].start };
    for (size_t e = i; e < j; e++) {
        k.runs |= c[e].runs;
        if (c[e].ranks > k.ranks)
            k.ranks = c[e].ranks;
        if (!k.dtype[0])
            k.dtype = c[e].dtype;
        if (c[e].bytes < 0)
            continue;
        bool leaf = true;
        for (size_t m = e + 1; m < j && c[m].start < c[e].end && leaf; m++)
            leaf = c[m].bytes < 0;
        if (!leaf)
            continue;
        k.bytes += c[e].bytes;
        k.sized = true;
        if (strcmp(c[e].name, "unknown") != 0)
            k.name = c[e].name; /* the sized event knows what it moved */
    }
    for (size_t e = i + 1; e < j && k.name == NULL; e++)
        k.name = strcmp(c[e].name, "unknown") != 0 ? c[e].name : NULL;
    if (k.name == NULL)
        k.name = "unknown";
    int64_t call[2] = { c[i].start, c[i].end };
    k.in = overlap(call, 1, win, nw);
    return k;
}

/* The end of the call that starts at c[i]: c[i+1 .. end) lie inside it. */
static size_t call_end(const tr_host_coll *c, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && c[j].thread == c[i].thread && c[j].start < c[i].end)
        j++;
    return j;
}

static void bucket_add(coll_bucket *o, const coll_call *k, bool counted)
{
    o->ns += k->in;
    o->requests += !counted;
    if (!counted)
        return;
    o->calls++;
    o->bytes += k->sized ? k->bytes * (double)k->in / (double)k->dur : 0;
    if (k->ranks > o->ranks)
        o->ranks = k->ranks;
    if (o->dtype[0] == '?')
        snprintf(o->dtype, sizeof o->dtype, "%s", k->dtype);
    else if (strcmp(o->dtype, k->dtype) != 0)
        o->dtype[0] = '\0';
}

/* Where gloo runs a collective on a thread of its own (its gloo:... event),
 * the caller's c10d::allreduce_ on the training thread is the request of the
 * same call: counting both would count every call, and its bytes, twice. So
 * when the windows hold a call that runs, the calls and bytes are those of
 * the calls that run; a request adds its time (the caller's thread spends it
 * there) to its kind. */
static int coll_buckets(tr_state *st, const int64_t *win, size_t nw, coll_bucket *b)
{
    tr_host_coll *c = st->host_colls;
    size_t n = st->n_host_colls;
    int nb = 0;
    if (n == 0)
        return 0;
    qsort(c, n, sizeof *c, cmp_coll);
    bool any_runs = false; /* a call in the windows runs on a thread of gloo's */
    for (size_t i = 0, j; i < n; i = j) {
        j = call_end(c, n, i);
        coll_call k = call_at(c, i, j, win, nw);
        any_runs |= k.in > 0 && k.runs;
    }
    /* the counted calls first, so that a request finds its call's kind */
    for (int requests = 0; requests < 2; requests++)
        for (size_t i = 0, j; i < n; i = j) {
            j = call_end(c, n, i);
            coll_call k = call_at(c, i, j, win, nw);
            bool counted = k.runs || !any_runs;
            if (k.in <= 0 || counted == (requests == 1))
                continue;
            coll_bucket *o = NULL;
            for (int m = 0; m < nb && !counted && o == NULL; m++)
                o = strcmp(b[m].name, k.name) == 0 ? &b[m] : NULL; /* a request: its call's kind */
            /* a request of a kind that never runs on a thread of its own is a call */
            bucket_add(o ? o : bucket_of(b, &nb, k.name, k.sized), &k, counted || o == NULL);
        }
    for (int i = 0; i < nb; i++) {
        if (b[i].dtype[0] == '?')
            b[i].dtype[0] = '\0';
        /* the profiler can stop before gloo's thread records its last run (a DDP trace of this VM: 4 requests, 3
         * runs): each request is a call, and a missing run moved the mean of the runs recorded */
        if (b[i].requests > b[i].calls && b[i].calls > 0) {
            b[i].bytes *= (double)b[i].requests / (double)b[i].calls;
            b[i].calls = b[i].requests;
        }
    }
    return nb;
}

/* distributedInfo.world_size, as the evidence keeps it (trace_analysis.c). */
static int world_size(const cJSON *ev)
{
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(ev, "world_size");
    return cJSON_IsNumber(ws) && ws->valuedouble >= 1 && ws->valuedouble <= 1e9 ? (int)ws->valuedouble : 0;
}

/* The step's collective time as one stage per kind, split by the kinds'
 * call time: `busy` the instants a collective was in flight in the windows
 * (its stages' time: their rate is bytes over it), `excl` those no op
 * covered (their exposed time, the step table's part). Each with its bytes
 * and group size where the trace records them, so an all-reduce is held
 * against the all-reduce ceiling (busbw for its rank count). Also evidence
 * "collectives". */
static int coll_stages(tr_state *st, mb_run *run, cJSON *ev, const int64_t *win, size_t nw, int64_t busy,
                       int64_t excl, mb_err *err)
{
    coll_bucket b[MAX_COLL_BUCKETS];
    int nb = coll_buckets(st, win, nw, b);
    int64_t total = 0;
    for (int i = 0; i < nb; i++)
        total += b[i].ns;
    const char *where = mb_tr_windows_said(st);
    int ws = world_size(ev);
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(ev, "collectives");
    char name[48], source[320];
    if (total <= 0) { /* the events lie outside the windows, or none was kept */
        snprintf(source, sizeof source, "trace: %lld host collective events within the %s (time only)",
                 st->cpu_count[TR_CPU_COLL], where);
        mb_stage s = { .name = "collective (host)", .component = "other", .role = "communication",
                       .device = "cpu", .work = (double)busy / 1e9, .work_unit = "s",
                       .seconds = (double)busy / 1e9, .count = st->cpu_count[TR_CPU_COLL], .source = source,
                       .has_exposed = true, .exposed_seconds = (double)excl / 1e9 };
        return mb_run_add_stage(run, &s, err);
    }
    bool ranks_unknown = false;
    for (int i = 0; i < nb; i++) {
        coll_bucket *o = &b[i];
        if (o->ns <= 0)
            continue;
        /* the kinds share the step's collective time by their call time */
        double secs = (double)busy / 1e9 * (double)o->ns / (double)total;
        double exposed = (double)excl / 1e9 * (double)o->ns / (double)total;
        /* a kind mlbench does not measure (barrier, alltoall, send/recv) is 'other' with role
         * communication, so the diagnosis still counts it as communication */
        const char *comp = mb_coll_stage_component(o->name);
        bool known = strcmp(o->name, "unknown") != 0;
        int ranks = o->ranks > 0 ? o->ranks : ws;
        ranks_unknown |= ranks == 0 && strcmp(comp, "other") != 0 && strcmp(comp, "broadcast") != 0;
        snprintf(name, sizeof name, "%s (host%s)", known ? o->name : "collective",
                 o->sized || !known ? "" : ", size unknown");
        snprintf(source, sizeof source,
                 "trace: %lld host %s calls within the %s; %s; %s; their share of the step's collective time "
                 "by call time",
                 o->calls, known ? o->name : "collective", where,
                 o->sized ? "bytes from their args (In msg nelems x dtype, or Input Dims x Input type)"
                          : "no size in their args: time only",
                 o->ranks > 0 ? "ranks from Group size" : ws > 0 ? "ranks from distributedInfo.world_size"
                                                                : "rank count not recorded");
        bool bytes = o->sized && o->bytes > 0;
        mb_stage s = { .name = name, .component = (char *)comp, .role = strcmp(comp, "other") == 0 ? "communication"
                                                                                                  : NULL,
                       .dtype = o->dtype[0] ? o->dtype : NULL, .device = "cpu", .ranks = ranks,
                       .block_size = bytes ? (long long)(o->bytes / (double)o->calls) : 0,
                       .work = bytes ? o->bytes : secs, .work_unit = bytes ? "byte" : "s", .seconds = secs,
                       .has_exposed = true, .exposed_seconds = exposed, .count = o->calls, .source = source };
        int rc = mb_run_add_stage(run, &s, err);
        if (rc != MB_OK)
            return rc;
        if (!cJSON_IsArray(arr))
            continue;
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, j);
        cJSON_AddStringToObject(j, "name", o->name);
        cJSON_AddStringToObject(j, "where", "host");
        if (o->dtype[0])
            cJSON_AddStringToObject(j, "dtype", o->dtype);
        else
            cJSON_AddNullToObject(j, "dtype");
        cJSON_AddNumberToObject(j, "calls", (double)o->calls);
        cJSON_AddNumberToObject(j, "seconds", secs);
        cJSON_AddNumberToObject(j, "exposed_seconds", exposed);
        if (ranks > 0)
            cJSON_AddNumberToObject(j, "ranks", ranks);
        else
            cJSON_AddNullToObject(j, "ranks");
        if (bytes) {
            mb_collective kind;
            cJSON_AddNumberToObject(j, "bytes", o->bytes);
            cJSON_AddNumberToObject(j, "algbw_gbps", mb_algbw(o->bytes, secs) / 1e9);
            if (ranks > 0 && mb_coll_from_name(comp, &kind))
                cJSON_AddNumberToObject(j, "busbw_gbps", mb_busbw(kind, o->bytes, secs, ranks) / 1e9);
        } else
            cJSON_AddNullToObject(j, "bytes");
    }
    if (ranks_unknown)
        mb_run_warn(run, "host collectives: rank count unknown (no Group size arg, no distributedInfo.world_size): "
                         "no bus bandwidth, no ceiling");
    return MB_OK;
}

/* ---- stages and the step table ------------------------------------------------ */

static cJSON *part_json(cJSON *parts, const char *id, const char *name, const char *cls, int64_t ns, double per,
                        int64_t wall)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(parts, o);
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "kind", "cpu");
    cJSON_AddStringToObject(o, "class", cls);
    cJSON_AddNumberToObject(o, "seconds", (double)ns / 1e9 / per);
    cJSON_AddNumberToObject(o, "share", (double)ns / (double)wall);
    return o;
}

/* The role of a class's stage (docs/stage-format.md): the model's other ops
 * are compute; the optimizer step is its own (its ops are not host code). */
static const char *cpu_role(int c)
{
    return c == TR_CPU_OPS ? "compute" : c == TR_CPU_OPT ? "optimizer" : NULL;
}

/* A stage of `work` in `unit` (flop, byte), or of its time alone when work is 0. */
static int cpu_stage(mb_run *run, const char *name, const char *comp, const char *role, const char *dtype,
                     double work, const char *unit, int64_t ns, long long count, const char *source, mb_err *err)
{
    double secs = (double)ns / 1e9;
    mb_stage s = { .name = (char *)name, .component = (char *)comp, .role = (char *)role, .dtype = (char *)dtype,
                   .device = "cpu", .work = work > 0 ? work : secs, .work_unit = work > 0 ? (char *)unit : "s",
                   .seconds = secs, .count = count, .source = (char *)source };
    return mb_run_add_stage(run, &s, err);
}

/* Why a CPU stage has no ceiling (evidence "unattributed", which gap shows):
 * what the trace lacks or no benchmark measures, not "host code". */
static int no_ceiling_reason(const tr_state *st, cJSON *ev, int c, const char *name, int gpus, mb_err *err)
{
    const char *why = NULL;
    char listed[320];
    int props = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ev, "device_properties"));
    if (gpus > 0 && props == 0 && st->gpu_only_ops == 0 && (c == TR_CPU_CONV || c == TR_CPU_GEMM || c == TR_CPU_MEM)) {
        snprintf(listed, sizeof listed,
                 "the trace labels %d GPU lane%s (Kineto's process_labels) but recorded no GPU activity: these ops "
                 "may have run there, and their time here is the host's; record with ProfilerActivity.CUDA too",
                 gpus, gpus == 1 ? "" : "s");
        why = listed;
    } else if (gpus > 0 && props == 0 && (c == TR_CPU_CONV || c == TR_CPU_GEMM || c == TR_CPU_MEM)) {
        snprintf(listed, sizeof listed,
                 "%lld ops only a GPU runs (%s) say the run used a GPU the trace did not record: these ops' time "
                 "here is the host's; record with ProfilerActivity.CUDA too (use_cuda=True in the older profiler)",
                 st->gpu_only_ops, st->gpu_only_op);
        why = listed;
    } else if (gpus > 0 && (c == TR_CPU_CONV || c == TR_CPU_GEMM || c == TR_CPU_MEM)) {
        snprintf(listed, sizeof listed,
                 "the trace lists %d GPU%s (deviceProperties) but recorded no GPU activity: these ops may have run "
                 "there, and their time here is the host's; record with ProfilerActivity.CUDA too",
                 gpus, gpus == 1 ? "" : "s");
        why = listed;
    } else if ((c == TR_CPU_CONV || c == TR_CPU_GEMM) && st->ops_with_dims > 0 &&
               st->shape_why[c == TR_CPU_CONV ? TR_OP_CONV : TR_OP_GEMM][0]) {
        /* shapes recorded, the count not: a 2023 torch's ResNet-18 on a CPU (DTU MLOps course traces) records
         * Input Dims and no stride or padding, and read "profile with record_shapes=True" */
        snprintf(listed, sizeof listed, "FLOPs unknown: %s; torch.profiler with record_shapes=True records them "
                 "from PyTorch 2.1 on, or python3 -m mlbench.simplify counts the step's FLOPs",
                 st->shape_why[c == TR_CPU_CONV ? TR_OP_CONV : TR_OP_GEMM]);
        why = listed;
    } else if (c == TR_CPU_OPT)
        why = "no benchmark measures an optimizer step on the CPU (its ops and the Python between them): time only";
    else if (c == TR_CPU_MEM && st->ops_with_dims == 0)
        why = st->array_form ? "bytes unknown: no op recorded its shapes (a PyTorch built without Kineto records none, "
                               "even with record_shapes=True): these memory-bound ops (by name: [memory_op] in "
                               "configs/gap/kernel_classes.ini) carry time only"
                             : "bytes unknown: no op recorded its shapes: these memory-bound ops (by name) carry time "
                               "only; with record_shapes=True they are held against host memory";
    else if (c == TR_CPU_OPS && st->ops_with_dims == 0 && st->array_form)
        why = "CPU ops without a byte model (indexing, views, comparisons: ops [memory_op] in "
              "configs/gap/kernel_classes.ini does not name): time only; no op recorded its shapes either (a "
              "PyTorch built without Kineto records none, even with record_shapes=True)";
    else if (c == TR_CPU_OPS && st->ops_with_dims == 0) /* a Kineto trace: record_shapes was off */
        why = "CPU ops without a byte model (indexing, views, comparisons: ops [memory_op] in "
              "configs/gap/kernel_classes.ini does not name): time only; no op recorded its shapes either "
              "(record_shapes=True records them)";
    else if (c == TR_CPU_OPS)
        why = "CPU ops without a byte model (indexing, views, comparisons: [memory_op] in "
              "configs/gap/kernel_classes.ini) or whose shapes gave none, and a matmul's or convolution's time around "
              "its innermost product (aten::linear's own, its transposes): time only";
    if (why == NULL)
        return MB_OK;
    cJSON *u = cJSON_GetObjectItemCaseSensitive(ev, "unattributed");
    if (!cJSON_IsObject(u))
        u = cJSON_AddObjectToObject(ev, "unattributed");
    if (u == NULL || cJSON_AddStringToObject(u, name, why) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    return MB_OK;
}

/* The instants where a matmul or convolution op only wraps one of its own
 * kind (aten::linear around aten::t, aten::matmul and aten::mm; conv2d
 * around mkldnn_convolution): the wrapper less what the innermost ops of
 * its kind cover. That is dispatch, views and copies, not the product: a
 * torch 1.10 CPU trace's gemm stage took linear's 167 ms where its mm and
 * bmm ran 55 ms, so the rate against the GEMM ceiling read 3x too low. A
 * sparse matmul (mb_tr_apply_sparse) is no GEMM either: all its time. Into
 * out (room for 2 * n_flop_ops + 1 pairs); the count. */
static size_t not_products(const tr_state *st, int64_t *out)
{
    size_t nw = 0, nl = 0;
    int64_t *leaf = out + 2 * st->n_flop_ops; /* the leaves, after the wrappers */
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        const tr_flop_op *op = &st->flop_ops[i];
        if (op->kind != TR_OP_GEMM && op->kind != TR_OP_CONV)
            continue;
        size_t k = i + 1; /* sorted by thread, then start, outer first */
        while (k < st->n_flop_ops && st->flop_ops[k].kind != op->kind)
            k++;
        bool wraps = k < st->n_flop_ops && st->flop_ops[k].thread == op->thread && st->flop_ops[k].start < op->end;
        int64_t *to = (op->flags & TR_OPF_SPARSE) || wraps ? &out[2 * nw++] : &leaf[2 * nl++];
        to[0] = op->start;
        to[1] = op->end;
    }
    nw = merge(out, nw);
    nl = merge(leaf, nl);
    int64_t *tmp = malloc((2 * (nw + nl) + 2) * sizeof *tmp);
    if (tmp == NULL)
        return SIZE_MAX;
    size_t n = subtract(out, nw, leaf, nl, tmp);
    memcpy(out, tmp, 2 * n * sizeof *out);
    free(tmp);
    return n;
}

/* The matmul and convolution lists less what not_products finds, which the
 * other aten ops' list takes (lists[] then point at the new lists, which
 * the caller frees). False: out of memory. */
static bool split_wrappers(tr_state *st, const tr_ivlist **lists, tr_ivlist *own, tr_ivlist *ops)
{
    mb_tr_sort_flop_ops(st);
    if (st->n_flop_ops == 0)
        return true;
    int64_t *sp = malloc((4 * st->n_flop_ops + 2) * sizeof *sp);
    size_t n = sp ? not_products(st, sp) : SIZE_MAX;
    if (n == SIZE_MAX) {
        free(sp);
        return false;
    }
    if (n == 0) {
        free(sp);
        return true;
    }
    static const int classes[2] = { TR_CPU_GEMM, TR_CPU_CONV };
    for (int c = 0; c < 2; c++) {
        tr_ivlist *g = &st->cpu_iv[classes[c]], *to = &own[c];
        g->n = g->n ? merge(g->iv, g->n) : 0;
        to->iv = malloc((2 * (g->n + n) + 2) * sizeof *to->iv);
        if (to->iv == NULL)
            break;
        to->n = subtract(g->iv, g->n, sp, n, to->iv);
        lists[1 + classes[c]] = to;
    }
    tr_ivlist *o = &st->cpu_iv[TR_CPU_OPS];
    ops->iv = malloc((2 * (o->n + n) + 2) * sizeof *ops->iv);
    if (ops->iv == NULL || own[0].iv == NULL || own[1].iv == NULL) {
        free(sp);
        return false;
    }
    if (o->n) /* an empty list's iv may be NULL */
        memcpy(ops->iv, o->iv, 2 * o->n * sizeof *ops->iv);
    memcpy(ops->iv + 2 * o->n, sp, 2 * n * sizeof *sp);
    ops->n = merge(ops->iv, o->n + n);
    free(sp);
    lists[1 + TR_CPU_OPS] = ops;
    return true;
}

/* PyTorch records CUDA's runtime calls with ProfilerActivity.CPU alone
 * (kineto_shim's CPU types), so runtime calls say only that CUDA was there:
 * a launch or a copy says the ops ran on the GPU. A particle transformer on
 * an A100 machine (cudaGetDeviceProperties, cudaStreamIsCapturing, no launch)
 * and a Colab ResNet-50 on a T4 machine's CPU (aten::mkldnn_convolution, no
 * runtime call) read "GPU activity not recorded". */
bool mb_tr_ran_on_cpu(const tr_state *st)
{
    if (st->n_devices > 0 || st->gpu_only_ops > 0 || st->launch.count > 0 || st->copy_calls > 0)
        return false;
    return st->runtime_calls > 0 || st->cpu_only_ops > 0;
}

/* Memory-bound ops by name whose shapes gave no bytes: in a trace without any shapes (a torch built without
 * Kineto) the memory-bound class, time only, so that the diagnosis names them (a CPU ConvNet's max-pool, batch
 * norm and ReLU, 46% of its step, read "other aten ops" beside advice on its GEMMs, 9%); with shapes the
 * other ops', as a memory-bound op whose shapes gave no bytes would understate its class's bytes. False: out
 * of memory. */
static bool place_unsized_memory_ops(tr_state *st)
{
    tr_ivlist *u = &st->cpu_mem_unsized, *to = &st->cpu_iv[st->ops_with_dims == 0 ? TR_CPU_MEM : TR_CPU_OPS];
    for (size_t i = 0; i < u->n; i++)
        if (!add_interval(to, u->iv[2 * i], u->iv[2 * i + 1] - u->iv[2 * i]))
            return false;
    st->cpu_count[st->ops_with_dims == 0 ? TR_CPU_MEM : TR_CPU_OPS] += st->cpu_mem_unsized_count;
    free(u->iv);
    *u = (tr_ivlist){ 0 };
    st->cpu_mem_unsized_count = 0;
    return true;
}

/* A stretch in no op this long is no op's dispatch (microseconds apart):
 * Python's own work or a wait. */
#define LONG_STRETCH_NS 1000000

/* A step's stretches in no op or annotation, each a mean over the steps (the
 * run without steps): the longest, and those of LONG_STRETCH_NS or more
 * (their time and number). Blocks of host code (a torch.save each step:
 * 19.2 ms of its 19.9 ms of Python a step, the next gap 63 us; an RL loop's
 * four 1.4-ms environment steps beside its policy's ops) are no dispatch
 * overhead to cut with fewer, larger ops. False: out of memory. */
typedef struct python_stretches {
    double longest_s, long_s, long_count;
    const char *range;  /* the loop's own range that holds the most of the long stretches, NULL none */
    double range_s;     /* ... how much of them, a step */
} python_stretches;

/* The user range (user_range) that holds the most of the long stretches
 * `longs` (sorted, disjoint). */
static void range_of_stretches(tr_state *st, const int64_t *longs, size_t nl, double n_steps, python_stretches *out)
{
    int64_t best = 0;
    for (int k = 0; k < st->n_user_ranges; k++) {
        tr_ivlist *l = &st->user_ranges[k].iv;
        if (l->n == 0)
            continue;
        l->n = merge(l->iv, l->n);
        int64_t in = overlap(l->iv, l->n, longs, nl);
        if (in > best) {
            best = in;
            out->range = st->user_ranges[k].name;
        }
    }
    out->range_s = (double)best / 1e9 / n_steps;
}

static bool python_stretches_of(tr_state *st, const int64_t *win, size_t nw, const int64_t *cover, size_t nc,
                                python_stretches *out)
{
    int64_t *free_iv = malloc((2 * (nw + nc) + 2) * sizeof *free_iv);
    int64_t *longs = malloc((2 * (nw + nc) + 2) * sizeof *longs);
    size_t nl = 0;
    *out = (python_stretches){ 0 };
    if (free_iv == NULL || longs == NULL) {
        free(free_iv);
        free(longs);
        return false;
    }
    size_t nf = subtract(win, nw, cover, nc, free_iv);
    size_t n_steps = st->n_steps > 0 ? st->n_steps : 1;
    int64_t longest_sum = 0, long_sum = 0, long_count = 0;
    for (size_t k = 0, i = 0; k < n_steps; k++) { /* the steps sorted by start (mb_tr_cut_steps) */
        int64_t a = st->n_steps > 0 ? st->steps[k].start : win[0], b = st->n_steps > 0 ? st->steps[k].end : win[1];
        int64_t longest = 0;
        while (i < nf && free_iv[2 * i + 1] <= a)
            i++;
        for (size_t j = i; j < nf && free_iv[2 * j] < b; j++) {
            int64_t len = imin(free_iv[2 * j + 1], b) - imax(free_iv[2 * j], a);
            longest = imax(longest, len);
            if (len >= LONG_STRETCH_NS) {
                long_sum += len;
                long_count++;
                longs[2 * nl] = imax(free_iv[2 * j], a);
                longs[2 * nl++ + 1] = imin(free_iv[2 * j + 1], b);
            }
        }
        longest_sum += longest;
    }
    free(free_iv);
    out->longest_s = (double)longest_sum / 1e9 / (double)n_steps;
    out->long_s = (double)long_sum / 1e9 / (double)n_steps;
    out->long_count = (double)long_count / (double)n_steps;
    nl = merge(longs, nl); /* steps that overlap (two threads') can give overlapping stretches */
    range_of_stretches(st, longs, nl, (double)n_steps, out);
    free(longs);
    return true;
}

static int by_number(const void *a, const void *b)
{
    const tr_step *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* A ProfilerStep#N recorded twice at once (its windows overlap): the file
 * merges several processes' traces. -1: none; -2: out of memory. */
static long long step_recorded_twice(const tr_state *st)
{
    if (st->n_steps < 2)
        return -1; /* and no memcpy from steps, NULL without steps */
    tr_step *s = malloc(st->n_steps * sizeof *s);
    if (s == NULL)
        return -2;
    memcpy(s, st->steps, st->n_steps * sizeof *s);
    qsort(s, st->n_steps, sizeof *s, by_number);
    long long twice = -1;
    for (size_t i = 1; i < st->n_steps && twice < 0; i++)
        if (s[i].number >= 0 && s[i].number == s[i - 1].number && s[i].start < s[i - 1].end)
            twice = s[i].number;
    free(s);
    return twice;
}

int mb_tr_cpu_stages(tr_state *st, mb_run *run, cJSON *ev, mb_err *err)
{
    if (!place_unsized_memory_ops(st))
        return mb_errf(err, MB_ESYS, "out of memory");
    /* Two ranks' arrays joined (torch 1.13 names every process "CPU functions", thread 1): their ops share one
     * timeline, split once per instant, and the steps' union over their number read 21.3 ms for two ranks' 41.7 */
    long long twice = step_recorded_twice(st);
    if (twice == -2)
        return mb_errf(err, MB_ESYS, "out of memory");
    if (twice >= 0)
        return mb_errf(err, MB_EUSAGE, "%s: ProfilerStep#%lld is recorded twice at once: the file merges several "
                                       "processes' (ranks') traces, whose host timelines a CPU trace's analysis "
                                       "takes as one; give one rank's own trace (torch.profiler writes one per "
                                       "process)",
                       run->path ? run->path : "trace", twice);
    /* The windows: the steps (ProfilerSteps, optimizer steps), else the whole trace. */
    size_t nw = st->n_steps > 0 ? st->n_steps : 1;
    int64_t *win = malloc(2 * nw * sizeof *win);
    int64_t *cover = NULL, *free_iv = NULL;
    int rc = MB_OK;
    if (win == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    if (st->n_steps > 0) {
        for (size_t i = 0; i < nw; i++) {
            win[2 * i] = st->steps[i].start;
            win[2 * i + 1] = st->steps[i].end;
        }
    } else {
        win[0] = st->span_start;
        win[1] = st->span_end;
    }
    nw = merge(win, nw);
    int64_t wall = overlap(win, nw, win, nw);
    /* The classes in priority order; data loading is the host's wait list. */
    const tr_ivlist *lists[1 + TR_CPU_N];
    lists[0] = &st->host_iv[TR_HOST_DATA];
    for (int c = 0; c < TR_CPU_N; c++)
        lists[1 + c] = &st->cpu_iv[c];
    /* An optimizer whose step evaluates a closure (LBFGS) runs the model's
     * backward inside it: that time is the backward's ops', not the optimizer's. */
    tr_ivlist *opt = &st->cpu_iv[TR_CPU_OPT], *bwd = &st->cpu_backward;
    tr_ivlist opt_own = { 0 }, products[2] = { { 0 }, { 0 } }, ops_wrapped = { 0 };
    int64_t opt_backward = 0;
    if (opt->n && bwd->n) {
        opt->n = merge(opt->iv, opt->n);
        bwd->n = merge(bwd->iv, bwd->n);
        opt_own.iv = malloc((2 * (opt->n + bwd->n) + 2) * sizeof *opt_own.iv);
        if (opt_own.iv == NULL) {
            rc = mb_errf(err, MB_ESYS, "out of memory");
            goto done;
        }
        opt_own.n = subtract(opt->iv, opt->n, bwd->iv, bwd->n, opt_own.iv);
        opt_backward = overlap(opt->iv, opt->n, win, nw) - overlap(opt_own.iv, opt_own.n, win, nw);
        lists[1 + TR_CPU_OPT] = &opt_own;
    }
    if (!split_wrappers(st, lists, products, &ops_wrapped)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    if (st->sparse_matmuls > 0)
        mb_run_warn(run, "%lld sparse matmul%s in the trace (torch.spmm, torch.mm on a sparse tensor): it records the "
                         "sparse operand's dense shape, not its stored entries: their time counts with the other "
                         "aten ops, with no ceiling", st->sparse_matmuls, st->sparse_matmuls == 1 ? "" : "s");
    size_t total = 0;
    for (int k = 0; k <= TR_CPU_N; k++)
        total += lists[k]->n;
    cover = malloc((2 * total + 2) * sizeof *cover);
    if (cover == NULL || wall <= 0) {
        rc = cover == NULL ? mb_errf(err, MB_ESYS, "out of memory") : MB_OK;
        goto done;
    }
    /* the instants a collective was in flight, whatever else ran: its stages' time */
    tr_ivlist *coll = &st->cpu_iv[TR_CPU_COLL];
    if (coll->n)
        coll->n = merge(coll->iv, coll->n);
    int64_t coll_busy = coll->n ? overlap(coll->iv, coll->n, win, nw) : 0;
    int64_t excl[1 + TR_CPU_N], in_ops = 0;
    size_t nc = 0;
    double mem_bytes = 0;
    long long mem_calls = 0;
    for (int k = 0; k <= TR_CPU_N; k++) {
        if (k == 1 + TR_CPU_MEM && lists[k]->n > 0) {
            /* the steps less what the classes before it hold */
            free_iv = malloc((2 * (nw + nc) + 2) * sizeof *free_iv);
            if (free_iv == NULL) {
                rc = mb_errf(err, MB_ESYS, "out of memory");
                goto done;
            }
            size_t nf = subtract(win, nw, cover, nc, free_iv);
            if (!mem_op_bytes(st, free_iv, nf, &mem_bytes, &mem_calls)) {
                rc = mb_errf(err, MB_ESYS, "out of memory");
                goto done;
            }
        }
        if (lists[k]->n) /* an empty list's iv may be NULL: no memcpy from NULL */
            memcpy(cover + 2 * nc, lists[k]->iv, 2 * lists[k]->n * sizeof *cover);
        nc = merge(cover, nc + lists[k]->n);
        int64_t now = overlap(cover, nc, win, nw);
        excl[k] = now - in_ops;
        in_ops = now;
    }
    /* The DataLoader stage (host_stages) summed its annotations' durations:
     * nested ones (torch's own inside the user's record_function) counted
     * twice, ones outside the steps too. Here it takes the step table's
     * figure, each instant once, so table, headline and step agree. */
    for (int i = 0; i < run->n_stages; i++) {
        mb_stage *d = &run->stages[i];
        if (d->role && strcmp(d->role, "data") == 0 && strcmp(d->work_unit, "s") == 0) {
            d->seconds = d->work = (double)excl[0] / 1e9;
            d->has_exposed = false;
        }
    }
    cJSON *host = cJSON_GetObjectItemCaseSensitive(ev, "host");
    cJSON *dl = cJSON_IsObject(host) ? cJSON_GetObjectItemCaseSensitive(host, "dataloader") : NULL;
    if (cJSON_IsObject(dl)) /* the diagnosis's data share: the same figure */
        cJSON_ReplaceItemInObjectCaseSensitive(dl, "seconds", cJSON_CreateNumber((double)excl[0] / 1e9));
    double per = (double)(st->n_steps > 0 ? st->n_steps : 1);
    cJSON_DeleteItemFromObjectCaseSensitive(ev, "step"); /* null: no GPU to split a step by */
    cJSON *step = cJSON_AddObjectToObject(ev, "step");
    cJSON_AddStringToObject(step, "window", mb_tr_window(st));
    cJSON_AddNumberToObject(step, "steps", per);
    cJSON_AddNumberToObject(step, "seconds", (double)wall / 1e9 / per);
    cJSON_AddNullToObject(step, "device");
    cJSON_AddStringToObject(step, "where", "cpu");
    tr_ivlist *emb = &st->cpu_dense_embedding;
    if (emb->n)
        emb->n = merge(emb->iv, emb->n);
    cJSON_AddNumberToObject(step, "dense_embedding_grad_seconds",
                            emb->n ? (double)overlap(emb->iv, emb->n, win, nw) / 1e9 / per : 0.0);
    /* a GPU machine's trace recorded without ProfilerActivity.CUDA: its ops'
     * times are the host's, whatever device they ran on */
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(ev, "device_properties"); /* deviceProperties */
    int gpus = cJSON_IsArray(props) ? cJSON_GetArraySize(props) : 0;
    if (gpus == 0 && st->gpu_only_ops > 0)
        gpus = 1; /* none listed, but cuDNN's ops ran: at least one */
    if (gpus == 0 && st->gpu_labels > 0)
        gpus = st->gpu_labels > INT_MAX ? INT_MAX : (int)st->gpu_labels; /* Kineto labelled their lanes */
    if (gpus > 0 && mb_tr_ran_on_cpu(st))
        gpus = 0;
    cJSON_AddNumberToObject(step, "gpus_unrecorded", gpus);
    cJSON_AddNumberToObject(step, "optimizer_backward_seconds", (double)opt_backward / 1e9 / per);
    if (opt_backward > 0) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, (double)opt_backward / 1e9 / per);
        mb_run_warn(run, "the optimizer's step runs the model's backward (%s per step: a closure optimizer such as "
                         "LBFGS evaluates the model inside step()): the backward's ops, and the forward's matmuls and "
                         "convolutions, count as theirs; the forward's other ops still count as the optimizer's (the "
                         "trace does not mark them)", t);
    }
    cJSON *parts = cJSON_AddArrayToObject(step, "parts");
    static const char *const ids[1 + TR_CPU_N] = { "data", "conv", "gemm", "optimizer", "memory", "ops",
                                                   "collective" };
    static const char *const classes[1 + TR_CPU_N] = { "dataloader", "conv", "gemm", "optimizer", "memory-bound",
                                                       "ops", "collective" };
    char source[256];
    const char *const *names = gpus > 0 ? unrecorded_class_names : cpu_class_names;
    for (int k = 0; k <= TR_CPU_N && rc == MB_OK; k++) {
        int c = k - 1;
        if (c == TR_CPU_COLL && coll_busy > 0) { /* hidden behind the ops, still a stage */
            if (excl[k] > 0)
                part_json(parts, ids[k], names[c], classes[k], excl[k], per, wall);
            rc = coll_stages(st, run, ev, win, nw, coll_busy, excl[k], err);
            continue;
        }
        if (excl[k] <= 0)
            continue;
        const char *name = k == 0 ? "data loading" : names[c];
        part_json(parts, ids[k], name, classes[k], excl[k], per, wall);
        if (k == 0)
            continue; /* the dataloading stage comes from the annotations (host_stages) */
        double work = 0;
        const char *dtype = NULL, *comp = "other", *unit = "flop";
        long long calls = st->cpu_count[c];
        if (c == TR_CPU_CONV || c == TR_CPU_GEMM) {
            comp = c == TR_CPU_CONV ? "conv" : "gemm";
            long long leaves;
            if (!leaf_flops(st, c == TR_CPU_CONV ? TR_OP_CONV : TR_OP_GEMM, &work, &leaves, &dtype))
                work = 0;
            else
                calls = leaves;
        } else if (c == TR_CPU_MEM) { /* their bytes against host memory (STREAM) */
            comp = "hostmem";
            unit = "byte";
            work = mem_bytes;
            calls = mem_calls > 0 ? mem_calls : calls; /* none with bytes: its events */
        }
        if (gpus > 0)
            work = 0; /* a GPU's ops timed on the host are not the CPU's work */
        snprintf(source, sizeof source, "trace: %lld CPU %s events within the %s, each instant counted once%s",
                 st->cpu_count[c], ids[k], mb_tr_windows_said(st),
                 work <= 0                ? ""
                 : c == TR_CPU_MEM ? "; bytes of the outermost ops from their recorded shapes ([memory_op], a lower "
                                     "bound)"
                                   : "; FLOPs of the innermost ops with recorded shapes");
        rc = cpu_stage(run, name, comp, cpu_role(c), dtype, work, unit, excl[k], calls, source,
                       err); /* the model's ops: compute a GPU would run too */
        if (rc == MB_OK && work <= 0)
            rc = no_ceiling_reason(st, ev, c, name, gpus, err);
    }
    int64_t python = wall - in_ops;
    if (rc == MB_OK && python > 0) {
        python_stretches ps;
        if (!python_stretches_of(st, win, nw, cover, nc, &ps)) {
            rc = mb_errf(err, MB_ESYS, "out of memory");
            goto done;
        }
        /* steps that overlap (ProfilerSteps of two threads) are measured one by one, the Python over their union */
        double py = (double)python / 1e9 / per;
        cJSON_AddNumberToObject(step, "python_longest_seconds", fmin(ps.longest_s, py));
        cJSON_AddNumberToObject(step, "python_long_seconds", fmin(ps.long_s, py));
        cJSON_AddNumberToObject(step, "python_long_stretches", ps.long_count);
        if (ps.range && ps.range_s > 0) { /* the loop's own range the most of them lie in */
            cJSON_AddStringToObject(step, "python_long_range", ps.range);
            cJSON_AddNumberToObject(step, "python_long_range_seconds", fmin(ps.range_s, fmin(ps.long_s, py)));
        }
        part_json(parts, "python", "Python and other host code", "host", python, per, wall);
        snprintf(source, sizeof source, "trace: time within the %s in no op or annotation",
                 mb_tr_windows_said(st));
        rc = cpu_stage(run, "python (host code)", "other", NULL, NULL, 0, "s", python, 0, source, err);
    }
    if (rc == MB_OK && st->n_steps > 0)
        run->total_seconds = (double)wall / 1e9; /* the stages cover the steps */
done:
    free(win);
    free(cover);
    free(free_iv);
    free(opt_own.iv);
    free(products[0].iv);
    free(products[1].iv);
    free(ops_wrapped.iv);
    return rc;
}
