/* trace_analysis.c: what the parse gathered (tr_state) becomes the stages,
 * warnings and evidence of an mb_run.
 *
 * Order of the work, each step relying on the one before:
 *   1. sort steps, host-wait intervals (merged) and each device's GPU events
 *      by start (the file order is not time order);
 *   2. attribute kernels to the matmul/conv/attention/memory-bound ops that
 *      launched them, backward ops without shapes taking their forward op's
 *      FLOPs (needs the correlation ids, so before step 4);
 *   3. per-step time by kernel class (needs the raw events);
 *   4. merge each device's events in place into busy intervals (a union over
 *      streams, so overlap counts once); busy/idle/host-wait per device and
 *      per step come from the merged lists.
 * docs/traces.md describes every figure. */
#include "trace.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "formulas.h"
#include "vocabulary.h"

/* A trace's stages are bounded by construction (16 FLOP groups, 32 kernel
 * classes, 32 collectives twice, 20 copy kinds, memset, 3 host stages, the
 * idle one): more is a bug, refused. */
enum { MAX_STEPS_IN_EVIDENCE = 1000, MAX_TRACE_STAGES = 256 };

static double sec(int64_t ns)
{
    return (double)ns / 1e9;
}

static int64_t ev_dur(const int64_t *w)
{
    return (int64_t)((uint64_t)w[1] >> TR_EV_DUR_SHIFT);
}

static int ev_elem_bytes(const int64_t *w)
{
    return (int)(((uint64_t)w[1] >> 8) & 0xf);
}

static int ev_class(const int64_t *w)
{
    return (int)((uint64_t)w[1] & TR_EV_CLASS);
}

static bool ev_tf32(const int64_t *w)
{
    return ((uint64_t)w[1] & TR_EV_TF32) != 0;
}

static bool ev_layout(const int64_t *w)
{
    return ((uint64_t)w[1] & TR_EV_LAYOUT) != 0;
}

static bool ev_fp32(const int64_t *w)
{
    return ((uint64_t)w[1] & TR_EV_FP32) != 0;
}

static bool ev_small_grid(const int64_t *w)
{
    return ((uint64_t)w[1] & TR_EV_SMALL_GRID) != 0;
}

/* ---- sorting and merging ---------------------------------------------------- */

static int cmp_ev(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static int cmp_step(const void *a, const void *b)
{
    const tr_step *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* One step's window in words: "ProfilerStep", "optimizer step", or the
 * user's annotation that cut the steps ("train_step") */
static const char *step_said(const tr_state *st)
{
    return st->steps_from_optimizer ? "optimizer step" : st->steps_from_annotation ? st->step_annotation
                                                                                     : "ProfilerStep";
}

/* Sorted [start, end) pairs merged in place; returns the new count. Touching
 * intervals merge too (no idle time between them). */
static size_t merge_pairs(int64_t *iv, size_t n)
{
    if (n == 0)
        return 0;
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[2 * i] <= iv[2 * m + 1]) {
            if (iv[2 * i + 1] > iv[2 * m + 1])
                iv[2 * m + 1] = iv[2 * i + 1];
        } else {
            m++;
            iv[2 * m] = iv[2 * i];
            iv[2 * m + 1] = iv[2 * i + 1];
        }
    }
    return m + 1;
}

/* The device's sorted 3-word events become merged 2-word [start, end)
 * pairs in the same buffer: merged interval m is written to words
 * [2m, 2m+2), which only ever covers events already read (2m+2 <= 3i). */
static size_t merge_events(int64_t *ev, size_t n)
{
    if (n == 0)
        return 0;
    int64_t s = ev[0], e = ev[0] + ev_dur(ev);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        const int64_t *w = ev + i * TR_EV_WORDS;
        int64_t ws = w[0], we = w[0] + ev_dur(w);
        if (ws <= e) {
            if (we > e)
                e = we;
            continue;
        }
        ev[2 * m] = s;
        ev[2 * m + 1] = e;
        m++;
        s = ws;
        e = we;
    }
    ev[2 * m] = s;
    ev[2 * m + 1] = e;
    return m + 1;
}

/* First pair whose end is after `a` (ends are sorted in a merged list). */
static size_t first_ending_after(const int64_t *iv, size_t n, int64_t a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (iv[2 * mid + 1] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether ts lies in one of the pairs of a merged list (NULL: no list, every
 * ts does). */
static bool in_windows(const int64_t *iv, size_t n, int64_t ts)
{
    if (iv == NULL)
        return true;
    size_t i = first_ending_after(iv, n, ts);
    return i < n && iv[2 * i] <= ts;
}

/* Length of (union of pairs) within [a, b). */
static int64_t clip_measure(const int64_t *iv, size_t n, int64_t a, int64_t b)
{
    int64_t sum = 0;
    for (size_t i = first_ending_after(iv, n, a); i < n && iv[2 * i] < b; i++)
        sum += imin(iv[2 * i + 1], b) - imax(iv[2 * i], a);
    return sum;
}

/* Length of (x ∩ y) within [a, b), both merged lists. */
static int64_t clip_intersection(const int64_t *x, size_t nx, const int64_t *y, size_t ny,
                                 int64_t a, int64_t b)
{
    int64_t sum = 0;
    size_t i = first_ending_after(x, nx, a), j = first_ending_after(y, ny, a);
    while (i < nx && j < ny && x[2 * i] < b && y[2 * j] < b) {
        int64_t lo = imax(imax(x[2 * i], y[2 * j]), a);
        int64_t hi = imin(imin(x[2 * i + 1], y[2 * j + 1]), b);
        if (hi > lo)
            sum += hi - lo;
        if (x[2 * i + 1] < y[2 * j + 1])
            i++;
        else
            j++;
    }
    return sum;
}

/* ---- kernel → op attribution ------------------------------------------------- */

/* corr → flop-op index, open addressing over int64 keys (corr >= 0). */
typedef struct corr_map {
    int64_t *keys;
    int32_t *vals;
    size_t cap, used;
} corr_map;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static bool corr_put(corr_map *m, int64_t key, int32_t val)
{
    if ((m->used + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        int64_t *k = malloc(cap * sizeof *k);
        int32_t *v = malloc(cap * sizeof *v);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            return false;
        }
        for (size_t i = 0; i < cap; i++)
            k[i] = -1;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] < 0)
                continue;
            size_t j = mix((uint64_t)m->keys[i]) & (cap - 1);
            while (k[j] >= 0)
                j = (j + 1) & (cap - 1);
            k[j] = m->keys[i];
            v[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = k;
        m->vals = v;
        m->cap = cap;
    }
    size_t j = mix((uint64_t)key) & (m->cap - 1);
    while (m->keys[j] >= 0 && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (m->keys[j] < 0)
        m->used++;
    m->keys[j] = key;
    m->vals[j] = val;
    return true;
}

static int32_t corr_get(const corr_map *m, int64_t key)
{
    if (m->cap == 0 || key < 0)
        return -1;
    for (size_t j = mix((uint64_t)key) & (m->cap - 1); m->keys[j] >= 0; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key)
            return m->vals[j];
    return -1;
}

static int cmp_op(const void *a, const void *b)
{
    const tr_flop_op *x = a, *y = b;
    if (x->thread != y->thread)
        return (x->thread > y->thread) - (x->thread < y->thread);
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->end < y->end) - (x->end > y->end); /* outer (longer) first */
}

static int cmp_launch(const void *a, const void *b)
{
    const tr_launch *x = a, *y = b;
    if (x->thread != y->thread)
        return (x->thread > y->thread) - (x->thread < y->thread);
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Matmul, convolution and attention: tensor-core work with FLOPs. */
static bool tensor_family(int kind)
{
    return kind == TR_OP_GEMM || kind == TR_OP_CONV || kind == TR_OP_ATTN;
}

/* The family an op nests within for the leaf rule: the tensor-core ops are
 * one (aten::matmul around aten::bmm, aten::scaled_dot_product_attention
 * around the math path's bmm), memory-bound ops another, autograd nodes a
 * third. */
static int nest_family(int kind)
{
    return tensor_family(kind) ? TR_OP_GEMM : kind;
}

/* Ops on one thread nest: each gets its enclosing op (`parent`) and the
 * flags the attribution reads. A matmul/conv/attention op enclosing another
 * one with a count (matmul -> bmm, linear -> addmm) does its work through
 * it, so only innermost ("leaf") ones count theirs (TR_OPF_PARENT); an op
 * whose child has no count stays the leaf. A memory-bound op takes the
 * kernels launched directly in it even around another memory-bound op:
 * native_batch_norm calls zeros -> fill_ before its own statistics and
 * transform kernels, and would otherwise count none of them. */
static void mark_nest(tr_flop_op *ops, size_t n, size_t *stack)
{
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        tr_flop_op *op = &ops[i];
        if (i > 0 && op->thread != ops[i - 1].thread)
            top = 0;
        while (top > 0 && ops[stack[top - 1]].end <= op->start)
            top--;
        op->parent = top > 0 ? (int32_t)stack[top - 1] : -1;
        bool family_seen = false, bwd_seen = false;
        for (size_t k = top; k > 0; k--) {
            tr_flop_op *up = &ops[stack[k - 1]];
            if (op->end > up->end)
                break; /* overlaps without enclosing: nothing above encloses it either */
            if (!family_seen && nest_family(up->kind) == nest_family(op->kind)) {
                family_seen = true;
                up->flags |= TR_OPF_PARENT_ANY | (op->flops >= 0 ? TR_OPF_PARENT : 0);
                if (op->kind == TR_OP_BWD)
                    up->flags |= TR_OPF_BWD_OUTER;
            }
            if (!bwd_seen && up->kind == TR_OP_BWD && op->kind != TR_OP_BWD) {
                bwd_seen = true;
                if (tensor_family(op->kind)) {
                    up->flags |= TR_OPF_BWD_TENSOR;
                    op->flags |= TR_OPF_IN_BWD;
                }
            }
        }
        stack[top++] = i;
    }
}

/* The innermost autograd node around an op, or -1. */
static int32_t node_of(const tr_flop_op *ops, int32_t i)
{
    for (i = ops[i].parent; i >= 0; i = ops[i].parent)
        if (ops[i].kind == TR_OP_BWD)
            return i;
    return -1;
}

/* How many forward-sized products the backward of a family computes when
 * the trace does not say: a matmul's backward is 2 (the gradient of each
 * operand, dgrad and wgrad), a convolution's 2 (input and weight; its bias
 * gradient is a reduction), attention's 10/4 (mb_proj_sdpa_flops: the
 * backward recomputes the scores and runs four more matmuls). One backward
 * op of a matmul (aten::mm under AddmmBackward0) is one product. A network's
 * first layer, whose input needs no gradient, computes only the weight's:
 * its backward FLOPs are then counted twice. */
static double backward_products(int family, bool one_op)
{
    if (family == TR_OP_ATTN)
        return 10.0 / 4.0;
    return family == TR_OP_GEMM && one_op ? 1 : 2;
}

/* A forward convolution whose shapes give no FLOPs (torch before 2.1
 * records no stride or padding: no "Concrete Inputs") takes them from its
 * backward op, which records grad_output and so the output's size: the
 * backward's FLOPs over the products it counted (torch 1.9's
 * cudnn_convolution_backward, 2.0's convolution_backward), found by the
 * Sequence number its autograd node shares with the forward op. */
static bool forward_from_backward(tr_flop_op *ops, size_t n)
{
    corr_map bwd = {0};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const tr_flop_op *op = &ops[i];
        if (op->kind != TR_OP_CONV || op->flops < 0 || op->products == 0 || !(op->flags & TR_OPF_IN_BWD) ||
            op->flags & TR_OPF_PARENT)
            continue;
        int32_t node = node_of(ops, (int32_t)i);
        if (node < 0 || ops[node].seq < 0)
            continue;
        int32_t had = corr_get(&bwd, ops[node].seq);
        ok = corr_put(&bwd, ops[node].seq, had == -1 ? (int32_t)i : -2); /* -2: several */
    }
    for (size_t i = 0; i < n && ok && bwd.used > 0; i++) {
        tr_flop_op *op = &ops[i];
        if (op->kind != TR_OP_CONV || op->flops >= 0 || op->flags & (TR_OPF_IN_BWD | TR_OPF_PARENT_ANY))
            continue;
        int64_t seq = op->seq;
        for (int32_t p = op->parent; seq < 0 && p >= 0 && ops[p].kind == TR_OP_CONV; p = ops[p].parent)
            seq = ops[p].seq; /* cudnn_convolution inside aten::convolution, which recorded it */
        int32_t b = seq >= 0 ? corr_get(&bwd, seq) : -1;
        if (b < 0)
            continue;
        op->flops = ops[b].flops / ops[b].products;
        op->flags |= TR_OPF_FROM_BWD;
        op->why = 0;
    }
    free(bwd.keys);
    free(bwd.vals);
    return ok;
}

/* Backward kernels whose op has no usable shapes (a backward matmul without
 * "Input Dims", a kernel launched by the autograd node itself) take their
 * FLOPs from the forward op their node belongs to: Kineto gives the node
 * ("MmBackward0", "autograd::engine::evaluate_function: MmBackward0") the
 * "Sequence number" the forward op recorded when it created that node. The
 * forward op is the leaf matmul/conv/attention op with a count whose own or
 * enclosing op's sequence number it is (cudnn_convolution inherits
 * aten::convolution's). */
static bool link_backward(tr_flop_op *ops, size_t n, corr_map *fwd)
{
    if (!forward_from_backward(ops, n))
        return false;
    for (size_t i = 0; i < n; i++) {
        tr_flop_op *op = &ops[i];
        op->link = TR_LINK_NONE;
        if (!tensor_family(op->kind) || op->flags & TR_OPF_IN_BWD)
            continue;
        if (op->seq < 0 && op->parent >= 0 && tensor_family(ops[op->parent].kind))
            op->seq = ops[op->parent].seq; /* the parent comes first and has inherited already */
        if (op->flags & TR_OPF_PARENT || op->flops < 0 || op->seq < 0)
            continue;
        int32_t had = corr_get(fwd, op->seq);
        if (!corr_put(fwd, op->seq, had == -1 ? (int32_t)i : -2)) /* -2: several forward ops */
            return false;
    }
    for (size_t i = 0; i < n; i++) {
        tr_flop_op *op = &ops[i];
        int32_t node;
        bool one_op;
        if (op->kind == TR_OP_BWD) {
            /* a node that launched the products itself: no op of the family under it */
            if (op->flags & (TR_OPF_BWD_OUTER | TR_OPF_BWD_TENSOR))
                continue;
            node = (int32_t)i;
            one_op = false;
        } else if (tensor_family(op->kind) && op->flops < 0 && !(op->flags & TR_OPF_PARENT_ANY)) {
            node = op->flags & TR_OPF_IN_BWD ? node_of(ops, (int32_t)i) : -1;
            one_op = true;
            if (node < 0) {
                op->link = TR_LINK_NOT_BWD;
                continue;
            }
        } else {
            continue;
        }
        int32_t f = corr_get(fwd, ops[node].seq);
        const tr_flop_op *fw = f >= 0 ? &ops[f] : NULL;
        if (fw == NULL || (op->kind != TR_OP_BWD && fw->kind != op->kind)) {
            op->link = f == -2 ? TR_LINK_AMBIGUOUS : fw ? TR_LINK_FAMILY : TR_LINK_NO_FWD;
            continue;
        }
        op->flops = backward_products(fw->kind, one_op) * fw->flops;
        op->dtype = fw->dtype;
        op->family = fw->kind;
        op->flags |= TR_OPF_LINKED;
    }
    return true;
}

/* Launch call -> the innermost op around it on the same thread (-2: none)
 * -> corr map. */
static bool map_launches(tr_state *st, corr_map *map, size_t *stack)
{
    tr_flop_op *ops = st->flop_ops;
    size_t n = st->n_flop_ops, i = 0, top = 0;
    int64_t thread = INT64_MIN;
    for (size_t l = 0; l < st->n_launches; l++) {
        const tr_launch *ln = &st->launches[l];
        if (ln->thread != thread) {
            thread = ln->thread;
            top = 0;
            while (i < n && ops[i].thread < thread)
                i++;
        }
        while (i < n && ops[i].thread == thread && ops[i].start <= ln->ts) {
            while (top > 0 && ops[stack[top - 1]].end <= ops[i].start)
                top--;
            stack[top++] = i++;
        }
        while (top > 0 && ops[stack[top - 1]].end < ln->ts)
            top--;
        if (ln->corr >= 0 && !corr_put(map, ln->corr, top > 0 ? (int32_t)stack[top - 1] : -2))
            return false;
    }
    /* A graph's replay: whatever op is around it, its kernels are the ops' that ran at capture (-3). */
    for (size_t g = 0; g < st->n_graph_corrs; g++)
        if (!corr_put(map, st->graph_corrs[g], -3))
            return false;
    return true;
}

/* Kernel classes of matrix math (gemm, conv, an ini class named
 * "attention"); every other compute class is memory-bound work. */
static bool tensor_class(const tr_rules *r, int cls)
{
    return cls == TR_CLASS_GEMM || cls == TR_CLASS_CONV ||
           (cls < r->n_classes && strcmp(r->class_names[cls], "attention") == 0);
}

/* Why a kernel went to no op: the hint of the time-only stage it lands in. */
enum { CAUSE_NO_LAUNCH = 0, CAUSE_NO_OP, CAUSE_UNCOUNTED, CAUSE_WRAPPER, CAUSE_GRAPH, CAUSE_SPARSE, N_CAUSES };

/* Kernel time the ops took, and what no op took by why. */
typedef struct kernel_attr {
    int64_t ns[TR_MAX_CLASSES];
    long long count[TR_MAX_CLASSES];
    int64_t cause_ns[TR_MAX_CLASSES][N_CAUSES];
    /* CAUSE_UNCOUNTED (tensor-core kernels only) by family, the op's reason
     * (tr_state.why; 0: an autograd node) and why no forward op gave it
     * FLOPs: [family][why * TR_LINK_N + link] */
    int64_t uncounted_ns[TR_N_OP_KINDS][(TR_MAX_WHY + 1) * TR_LINK_N];
    long long graph_kernels; /* GPU events replayed from CUDA graphs: launched by the replays' calls */
} kernel_attr;

/* The family of a kernel class with FLOPs (gemm, conv, an ini class named
 * "attention"), else TR_OP_NONE. */
static int class_family(const tr_rules *r, int cls)
{
    return cls == TR_CLASS_GEMM ? TR_OP_GEMM
           : cls == TR_CLASS_CONV ? TR_OP_CONV
           : tensor_class(r, cls) ? TR_OP_ATTN
                                  : TR_OP_NONE;
}

static int op_family(const tr_flop_op *op);

/* The kernel class of a matmul, convolution or attention family; -1 when
 * the rules have none. */
static int family_class(const tr_rules *r, int family)
{
    for (int c = 0; c < r->n_classes; c++)
        if (tensor_class(r, c) && class_family(r, c) == family)
            return c;
    return -1;
}

/* The op that takes a kernel whose launch's innermost op is `op`: a
 * memory-bound op takes memory-bound kernels (with or without bytes); a
 * leaf matmul/conv/attention op with FLOPs (its own or its forward op's)
 * takes every kernel; an autograd node given FLOPs takes tensor-core
 * kernels; what the innermost op cannot take goes to the ops around it. A
 * kernel launched directly by a matmul around another (the copies of a
 * broadcasting matmul) is not its product: none; nor is one a sparse matmul
 * launched (mb_tr_apply_sparse), whatever its class. */
static int32_t taker(const tr_flop_op *ops, int32_t op, bool tensor, int *cause, int32_t *uncounted)
{
    *uncounted = -1;
    for (; op >= 0; op = ops[op].parent) {
        const tr_flop_op *o = &ops[op];
        if (o->kind == TR_OP_MEM && !tensor)
            return op;
        if (o->flags & TR_OPF_SPARSE) {
            *cause = CAUSE_SPARSE;
            return -1;
        }
        if (tensor_family(o->kind) && o->flags & TR_OPF_PARENT) {
            *cause = CAUSE_WRAPPER;
            return -1;
        }
        if ((tensor_family(o->kind) || (o->kind == TR_OP_BWD && tensor)) && o->flops >= 0)
            return op;
        /* the op whose missing count keeps a tensor-core kernel from FLOPs */
        if (tensor && *uncounted < 0 && (tensor_family(o->kind) || (o->kind == TR_OP_BWD && o->link != TR_LINK_NONE)))
            *uncounted = op;
    }
    *cause = *uncounted >= 0 ? CAUSE_UNCOUNTED : CAUSE_NO_OP;
    return -1;
}

/* The bytes of the ops whose lists' element size only their kernels named
 * (tr_flop_op.per_elem), once all their kernels are seen. */
static void resolve_elem_sizes(tr_state *st)
{
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        tr_flop_op *op = &st->flop_ops[i];
        if (op->per_elem <= TR_ELEM_SIZE)
            continue;
        op->flops = -op->flops * (op->per_elem - TR_ELEM_SIZE);
        op->per_elem = 0;
        op->why = 0;
        st->ops_without_shapes[TR_OP_MEM]--;
    }
}

/* A kernel of the steps counted in class `to` instead of `from` (its op's
 * family), in the step table too. */
static void move_class(tr_device *dev, int64_t *w, int from, int to)
{
    dev->step_class_ns[from] -= ev_dur(w);
    dev->step_class_count[from]--;
    dev->step_class_ns[to] += ev_dur(w);
    dev->step_class_count[to]++;
    w[1] = (w[1] & ~(int64_t)TR_EV_CLASS) | to;
}

/* Adds each kernel's time to the op that takes it (taker); `ka` collects
 * what the class stages must leave out and why the rest went to no op. */
static int attribute_kernels(tr_state *st, const int64_t *win, size_t n_win, kernel_attr *ka, mb_err *err)
{
    if (st->n_devices == 0)
        return MB_OK; /* no kernels: trace_cpu.c reads the ops */
    if (st->n_flop_ops > INT32_MAX)
        return mb_errf(err, MB_ESYS, "too many matmul/conv/attention/memory-bound ops (%zu)", st->n_flop_ops);
    mb_tr_sort_flop_ops(st);
    if (st->n_launches > 1) /* qsort takes no NULL array, not even an empty one */
        qsort(st->launches, st->n_launches, sizeof *st->launches, cmp_launch);
    size_t *stack = malloc(sizeof *stack * (st->n_flop_ops ? st->n_flop_ops : 1));
    corr_map map = {0}, fwd = {0};
    int rc = MB_OK;
    if (stack == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    tr_flop_op *ops = st->flop_ops;
    const int fp32 = mb_tr_dtype_index("fp32"), tf32 = mb_tr_dtype_index("tf32");
    mark_nest(ops, st->n_flop_ops, stack);
    if (!link_backward(ops, st->n_flop_ops, &fwd) || !map_launches(st, &map, stack)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    for (int d = 0; d < st->n_devices; d++) {
        tr_device *dev = &st->devices[d];
        for (size_t i = 0; i < dev->n_ev; i++) {
            int64_t *w = dev->ev + i * TR_EV_WORDS;
            if (!in_windows(win, n_win, w[0]))
                continue; /* not in a step: count_in_steps */
            int cls = ev_class(w);
            int32_t in = corr_get(&map, w[2]), uncounted = -1, op = -1;
            ka->graph_kernels += in == -3;
            if (cls == TR_CLASS_MEMCPY || cls == TR_CLASS_MEMSET || cls == TR_CLASS_NCCL)
                continue;
            int cause = in == -1 ? CAUSE_NO_LAUNCH : in == -3 ? CAUSE_GRAPH : CAUSE_NO_OP;
            if (in >= 0)
                op = taker(ops, in, tensor_class(st->rules, cls), &cause, &uncounted);
            if (op < 0) {
                /* A matrix-math kernel under a matmul, convolution or attention op without a count is that
                 * family's all the same: cuDNN's convolutions run sgemm kernels (a T4's ResNet-50 without
                 * shapes: 7.5 ms of volta_sgemm under aten::cudnn_convolution read as "gemm") */
                int to = uncounted >= 0 && tensor_family(op_family(&ops[uncounted]))
                             ? family_class(st->rules, op_family(&ops[uncounted])) : -1;
                if (to >= 0 && to != cls) {
                    move_class(dev, w, cls, to);
                    cls = to;
                }
                ka->cause_ns[cls][cause] += ev_dur(w);
                if (uncounted >= 0)
                    ka->uncounted_ns[class_family(st->rules, cls)]
                                    [ops[uncounted].why * TR_LINK_N + ops[uncounted].link] += ev_dur(w);
                continue;
            }
            /* A kernel a matmul, convolution or attention op with FLOPs
             * takes is that op's work whatever its name (a cuDNN
             * convolution's implicit-GEMM kernels, AMD's Triton `attn_fwd`
             * inside SDPA): the step table counts it in that family's part,
             * where the stage's exposed time comes from, or the stage held
             * none of it and its time read as "no stage". */
            int fam = op_family(&ops[op]), to = tensor_family(fam) ? family_class(st->rules, fam) : -1;
            if (to >= 0 && to != cls) {
                move_class(dev, w, cls, to);
                cls = to;
            }
            /* an fp32 matmul or convolution whose kernel ran TF32 math is
             * held to the tf32 ceiling: the fp32 one (52 TFLOP/s on an H100
             * against 367) read its GEMMs "at 670% of its ceiling" */
            if (ev_tf32(w) && tensor_family(fam) && ops[op].dtype == fp32)
                ops[op].dtype = (uint8_t)tf32;
            int es = ev_elem_bytes(w);
            if (ops[op].per_elem == TR_ELEM_PENDING && es > 0)
                ops[op].per_elem = (uint8_t)(TR_ELEM_SIZE + es);
            else if (ops[op].per_elem > TR_ELEM_SIZE && es > 0 && ops[op].per_elem != TR_ELEM_SIZE + es)
                ops[op].per_elem = TR_ELEM_MIXED;
            ops[op].gpu_ns += ev_dur(w);
            ops[op].kernels++;
            ka->ns[cls] += ev_dur(w);
            ka->count[cls]++;
        }
    }
    resolve_elem_sizes(st);
done:
    free(stack);
    free(map.keys);
    free(map.vals);
    free(fwd.keys);
    free(fwd.vals);
    return rc;
}

/* ---- JSON helpers -------------------------------------------------------------- */

static cJSON *add_obj(cJSON *parent, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    if (parent && o)
        cJSON_AddItemToObject(parent, key, o);
    return o;
}

static cJSON *add_arr(cJSON *parent, const char *key)
{
    cJSON *a = cJSON_CreateArray();
    if (parent && a)
        cJSON_AddItemToObject(parent, key, a);
    return a;
}

static void add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddNumberToObject(o, key, v);
}

static void add_str(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *count_seconds(cJSON *parent, const char *key, long long count, int64_t ns)
{
    cJSON *o = add_obj(parent, key);
    add_num(o, "count", (double)count);
    add_num(o, "seconds", sec(ns));
    return o;
}

static void named_table(cJSON *host, const char *key, const tr_named_table *t)
{
    cJSON *o = count_seconds(host, key, t->count, t->ns);
    cJSON *calls = add_obj(o, "calls");
    for (int i = 0; i < t->n; i++)
        count_seconds(calls, t->s[i].name, t->s[i].count, t->s[i].ns);
    if (t->rest.count)
        count_seconds(calls, t->rest.name, t->rest.count, t->rest.ns);
}

static const char *const dir_names[TR_N_DIRS] = {"h2d", "d2h", "d2d", "p2p", "unknown"};
static const char *const mem_names[TR_N_MEMS] = {"pageable", "pinned", "device", "unknown"};

static void copy_json(cJSON *arr, int dir, int mem, const tr_copy_stat *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    add_str(o, "direction", dir_names[dir]);
    add_str(o, "memory", mem_names[mem]);
    add_num(o, "count", (double)c->count);
    add_num(o, "seconds", sec(c->ns));
    if (c->sized > 0) {
        add_num(o, "bytes", c->bytes);
        add_num(o, "gbps", c->sized_ns > 0 ? c->bytes / (double)c->sized_ns : 0);
        if (c->sized < c->count)
            add_num(o, "unsized", (double)(c->count - c->sized));
    } else {
        cJSON_AddNullToObject(o, "bytes");
        cJSON_AddNullToObject(o, "gbps");
    }
}

static void classes_json(cJSON *parent, const tr_rules *r, const int64_t *ns, const long long *count)
{
    cJSON *o = add_obj(parent, "classes");
    for (int c = 0; c < r->n_classes; c++) {
        if (count ? count[c] == 0 : ns[c] == 0)
            continue;
        cJSON *k = add_obj(o, r->class_names[c]);
        add_num(k, "seconds", sec(ns[c]));
        if (count)
            add_num(k, "count", (double)count[c]);
    }
}

static void idle_json(cJSON *o, int64_t window, int64_t busy, int64_t host_wait)
{
    add_num(o, "window_s", sec(window));
    add_num(o, "busy_s", sec(busy));
    add_num(o, "idle_s", sec(window - busy));
    add_num(o, "host_wait_idle_s", sec(host_wait));
    add_num(o, "other_idle_s", sec(window - busy - host_wait));
    add_num(o, "busy_fraction", window > 0 ? (double)busy / (double)window : 0);
}

/* ---- the analysis ---------------------------------------------------------------- */

/* The host's launch, sync and blocking-copy calls and DataLoader waits the
 * stages count: those that start in the host's step windows (the whole trace
 * without steps), as the GPU stages count the events that start in them. */
typedef struct host_calls {
    long long launches, long_launches, replays, syncs, blocking, data, setup, coll;
    long long ops; /* cpu_op events */
    int64_t longest_wait_ns; /* the longest sync call or blocking copy (the closing synchronize left out) */
    long long setup_steps; /* steps whose window holds a set-up call (0 without steps) */
    int64_t launch_ns, long_launch_ns, longest_launch_ns, sync_ns, blocking_ns, data_ns, setup_ns, coll_ns;
} host_calls;

typedef struct analysis {
    tr_state *st;
    mb_run *run;
    cJSON *ev;      /* evidence root */
    cJSON *partial; /* array */
    kernel_attr attr; /* kernels -> ops (attribute_kernels) */
    int64_t *busy;  /* per device: busy within the device window */
    int64_t *step_busy, *step_idle; /* per device: sums over steps */
    size_t *merged; /* per device: merged interval count */
    double world_size; /* 0 = unknown */
    struct step_table *tablep;
    tr_timeline tl;     /* which timeline cut the steps; tl.gpu: st->steps hold the GPU's windows */
    int64_t *host_win;  /* tl.gpu: the ProfilerSteps' own [start, end) pairs */
    int64_t *launch_end; /* [correlation id, end] of each kernel launch call, sorted (launch_ends) */
    size_t n_launch_end;
    long long closing_syncs; /* tl.gpu: sync calls after the steps' last launch (the closing synchronize) */
    int64_t closing_ns, closing_in_win_ns;
    /* the steps' windows, merged (NULL: no steps): the stages count the GPU
     * events that start in them (count_in_steps) */
    int64_t *win;
    size_t n_win;
    host_calls calls; /* the host's calls the launch, sync and data stages count */
    int64_t copy_alone[TR_N_DIRS][TR_N_MEMS]; /* copy_alone_ns of each kind with copies in the windows */
    /* the step-table part each stage's exposed time comes from (-1: none,
     * the stage keeps its own); set when the stage is added */
    int stage_part[MAX_TRACE_STAGES];
} analysis;

static void partial(analysis *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void partial(analysis *a, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(a->partial, cJSON_CreateString(buf));
    mb_run_warn(a->run, "%s", buf);
}

/* The deviceProperties entry of a device by its id; a trace that lists one GPU and ran on one is that GPU
 * whatever its id (ROCm numbers its agents: SGLang's MI300X kernels ran on device 2, deviceProperties lists id
 * 0, and the trace read "does not name the GPU") */
static cJSON *device_props_of(const analysis *a, int64_t id)
{
    cJSON *p, *list = cJSON_GetObjectItemCaseSensitive(a->ev, "device_properties");
    cJSON_ArrayForEach(p, list)
    {
        cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "id");
        if (cJSON_IsNumber(pid) && (int64_t)pid->valuedouble == id)
            return p;
    }
    return cJSON_GetArraySize(list) == 1 && a->st->n_devices == 1 ? cJSON_GetArrayItem(list, 0) : NULL;
}

/* The first of n records (stride words each, sorted by word `field`) whose
 * word `field` is at least x; n when none is. */
static size_t first_at_least(const int64_t *rec, size_t n, size_t stride, size_t field, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rec[mid * stride + field] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Per-step class times from the raw sorted events of one device. */
static void step_classes(const tr_state *st, const tr_device *d, int64_t maxdur, int64_t a,
                         int64_t b, int64_t *ns)
{
    memset(ns, 0, sizeof *ns * TR_MAX_CLASSES);
    size_t lo = first_at_least(d->ev, d->n_ev, TR_EV_WORDS, 0, a - maxdur);
    for (size_t i = lo; i < d->n_ev; i++) {
        const int64_t *w = d->ev + i * TR_EV_WORDS;
        if (w[0] >= b)
            break;
        int64_t ov = imin(w[0] + ev_dur(w), b) - imax(w[0], a);
        if (ov > 0)
            ns[ev_class(w)] += ov;
    }
    (void)st;
}

static int steps_evidence(analysis *a, cJSON **step_objs, size_t n_emit)
{
    tr_state *st = a->st;
    int64_t cls[TR_MAX_CLASSES];
    for (int d = 0; d < st->n_devices; d++) {
        tr_device *dev = &st->devices[d];
        int64_t maxdur = 0;
        for (size_t i = 0; i < dev->n_ev; i++)
            maxdur = imax(maxdur, ev_dur(dev->ev + i * TR_EV_WORDS));
        for (size_t s = 0; s < n_emit; s++) {
            cJSON *devs = cJSON_GetObjectItemCaseSensitive(step_objs[s], "devices");
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(devs, o);
            add_num(o, "id", (double)dev->id);
            step_classes(st, dev, maxdur, st->steps[s].start, st->steps[s].end, cls);
            classes_json(o, st->rules, cls, NULL);
        }
    }
    return MB_OK;
}

static void busy_evidence(analysis *a, cJSON *devices, cJSON **step_objs, size_t n_emit)
{
    tr_state *st = a->st;
    const int64_t *hw = st->host_wait;
    size_t nhw = st->n_host_wait;
    for (int d = 0; d < st->n_devices; d++) {
        tr_device *dev = &st->devices[d];
        size_t m = a->merged[d];
        const int64_t *b = dev->ev;
        cJSON *o = cJSON_GetArrayItem(devices, d);
        int64_t w0 = m ? b[0] : 0, w1 = m ? b[2 * m - 1] : 0;
        int64_t busy = clip_measure(b, m, w0, w1);
        int64_t wait = clip_measure(hw, nhw, w0, w1) - clip_intersection(hw, nhw, b, m, w0, w1);
        a->busy[d] = busy;
        idle_json(o, w1 - w0, busy, wait);
        for (size_t s = 0; s < st->n_steps; s++) {
            int64_t s0 = st->steps[s].start, s1 = st->steps[s].end;
            int64_t sb = clip_measure(b, m, s0, s1);
            int64_t sw = clip_measure(hw, nhw, s0, s1) - clip_intersection(hw, nhw, b, m, s0, s1);
            a->step_busy[d] += sb;
            a->step_idle[d] += (s1 - s0) - sb;
            if (s < n_emit) {
                cJSON *devs = cJSON_GetObjectItemCaseSensitive(step_objs[s], "devices");
                idle_json(cJSON_GetArrayItem(devs, d), s1 - s0, sb, sw);
            }
        }
    }
}

static void device_evidence(analysis *a, cJSON *devices, cJSON *all_copies)
{
    tr_state *st = a->st;
    tr_copy_stat total[TR_N_DIRS][TR_N_MEMS];
    memset(total, 0, sizeof total);
    for (int d = 0; d < st->n_devices; d++) {
        tr_device *dev = &st->devices[d];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(devices, o);
        add_num(o, "id", (double)dev->id);
        cJSON *props = device_props_of(a, dev->id);
        cJSON *name = props ? cJSON_GetObjectItemCaseSensitive(props, "name") : NULL;
        add_str(o, "name", cJSON_IsString(name) ? name->valuestring : NULL);
        add_num(o, "kernels", (double)dev->kernels);
        add_num(o, "memcpys", (double)dev->memcpys);
        add_num(o, "memsets", (double)dev->memsets);
        add_num(o, "streams", dev->n_streams);
        classes_json(o, st->rules, dev->class_ns, dev->class_count);
        cJSON *copies = add_arr(o, "copies");
        for (int i = 0; i < TR_N_DIRS; i++)
            for (int j = 0; j < TR_N_MEMS; j++) {
                const tr_copy_stat *c = &dev->copies[i][j];
                if (c->count == 0)
                    continue;
                copy_json(copies, i, j, c);
                tr_copy_stat *t = &total[i][j];
                t->count += c->count;
                t->sized += c->sized;
                t->bytes += c->bytes;
                t->ns += c->ns;
                t->sized_ns += c->sized_ns;
            }
    }
    for (int i = 0; i < TR_N_DIRS; i++)
        for (int j = 0; j < TR_N_MEMS; j++)
            if (total[i][j].count)
                copy_json(all_copies, i, j, &total[i][j]);
}

/* ---- the step table ------------------------------------------------------------ */

/* Every step's wall time is split into parts that add up to it: the main
 * device's busy time by kernel group, and its idle time by what the host
 * was doing then, or, where the next kernel's launch call had already
 * returned, the GPU's own gap between queued kernels (docs/traces.md, "The
 * step table"). */
enum {
    SP_GEMM = 0, SP_CONV, SP_ATTN, SP_MEM, SP_COPY, SP_COLL,        /* GPU busy */
    SP_QUEUED, SP_DATA, SP_SYNC, SP_SETUP, SP_HCOLL, SP_LAUNCH, SP_HOST, /* GPU idle, as enum tr_host_kind */
    SP_N,
    SP_FIRST_IDLE = SP_QUEUED,
    SP_FIRST_HOST = SP_DATA, /* the idle parts the host's calls explain (attribute_idle) */
};
_Static_assert(SP_SYNC - SP_FIRST_HOST == TR_HOST_SYNC && SP_SETUP - SP_FIRST_HOST == TR_HOST_SETUP &&
                   SP_HCOLL - SP_FIRST_HOST == TR_HOST_COLL && SP_LAUNCH - SP_FIRST_HOST == TR_HOST_LAUNCH &&
                   SP_HOST - SP_FIRST_HOST == TR_N_HOST,
               "the host parts of the step table follow enum tr_host_kind");

static const struct {
    const char *id, *name, *kind, *cls;
} sp_info[SP_N] = {
    [SP_GEMM] = {"gemm", "GEMM kernels", "gpu", "matrix math"},
    [SP_CONV] = {"conv", "convolution kernels", "gpu", "matrix math"},
    [SP_ATTN] = {"attention", "attention kernels", "gpu", "matrix math"},
    [SP_MEM] = {"memory_bound", "memory-bound kernels (elementwise, normalization, reduction, optimizer)",
                "gpu", "memory-bound"},
    [SP_COPY] = {"copy", "copies (memcpy)", "gpu", "copy"},
    [SP_COLL] = {"collective", "collectives (NCCL, RCCL, DeepEP kernels)", "gpu", "collective"},
    [SP_QUEUED] = {"queued", "with the next kernel queued (kernel wait)", "idle", "kernel wait"},
    [SP_DATA] = {"data", "waiting for data (DataLoader)", "idle", "data"},
    [SP_SYNC] = {"sync", "in a synchronization or blocking copy", "idle", "sync"},
    [SP_HCOLL] = {"host_collective", "in a collective (host)", "idle", "collective"},
    [SP_SETUP] = {"setup", "in allocation and set-up calls (cudaMalloc, cudaFree, module loading)", "idle",
                  "set-up"},
    [SP_LAUNCH] = {"launch", "in kernel launch calls", "idle", "launch"},
    [SP_HOST] = {"host", "other host code (framework, Python)", "idle", "host"},
};

/* Step part of a kernel class index: the fixed classes by meaning; an ini
 * class named "attention" is matrix math; every other class (other,
 * memset, ini extras) is memory-bound work. */
static int sp_of_class(const tr_rules *r, int cls)
{
    switch (cls) {
    case TR_CLASS_GEMM:
        return SP_GEMM;
    case TR_CLASS_CONV:
        return SP_CONV;
    case TR_CLASS_NCCL:
        return SP_COLL;
    case TR_CLASS_MEMCPY:
        return SP_COPY;
    default:
        return cls < r->n_classes && strcmp(r->class_names[cls], "attention") == 0 ? SP_ATTN : SP_MEM;
    }
}

/* Kernel durations in log2 bins of 1/16 octave (4.4% wide): the median
 * without keeping one number per kernel. */
enum { DUR_BINS = 64 * 16 };

typedef struct step_table {
    long long kernels;       /* kernels starting inside the windows */
    uint32_t dur_hist[DUR_BINS];
    int64_t ns[SP_N];        /* summed over the windows */
    int64_t wall;            /* summed window lengths */
    size_t windows;
    int device;              /* index of the main device, -1 = none */
    int sp_class[TR_MAX_CLASSES];
    /* the main device's copies and collectives as disjoint [start, end,
     * part) triples, sorted (first start first where they overlap): what
     * the gaps between compute kernels are filled from */
    int64_t *t2;
    size_t n_t2;
    /* [correlation id, end] of the kernel launch calls, sorted by id
     * (analysis.launch_end): whether a gap's next kernel was queued */
    const int64_t *launch_end;
    size_t n_launch_end;
    long long queued_gaps; /* gaps in the windows with the next kernel queued */
    int64_t startup_ns;    /* in the set-up part: the GPU idle before the trace's first kernel, after its launch
                              returned (gpu_startup) */
} step_table;

/* Idle [x, y) attributed to host kinds in priority order: the part covered
 * by kind k's merged intervals goes to k, the rest to the next kinds, what
 * none covers to "other host code". */
static void attribute_idle(const tr_state *st, int64_t x, int64_t y, int k, int64_t *ns)
{
    if (y <= x)
        return;
    if (k == TR_N_HOST) {
        ns[SP_HOST] += y - x;
        return;
    }
    const tr_ivlist *l = &st->host_iv[k];
    int64_t at = x;
    for (size_t i = first_ending_after(l->iv, l->n, x); i < l->n && l->iv[2 * i] < y; i++) {
        int64_t lo = imax(l->iv[2 * i], x), hi = imin(l->iv[2 * i + 1], y);
        attribute_idle(st, at, lo, k + 1, ns);
        ns[SP_FIRST_HOST + k] += hi - lo;
        at = hi;
    }
    attribute_idle(st, at, y, k + 1, ns);
}

/* Copies and collectives yield to compute: where one runs beside a kernel
 * it is hidden (what overlap is for), and only the time no kernel covers is
 * theirs, as HTA counts exposed communication. A collective launched before
 * the backward kernels it overlaps (DDP's all-reduce, DeepEP's all-to-all
 * spinning on another stream) would otherwise take their time. */
static bool yields_to_compute(const step_table *t, int cls)
{
    return t->sp_class[cls] == SP_COPY || t->sp_class[cls] == SP_COLL;
}

/* Idle [x, y): the GPU's own gap when its next kernel was queued and the
 * gap is as short as launching it takes, else what the host did. Whether
 * it went to the queue. */
static bool idle_to(const tr_state *st, int64_t x, int64_t y, bool queued, int64_t *ns)
{
    if (y <= x)
        return false;
    if (queued && y - x <= MB_KERNEL_WAIT_MAX_NS) {
        ns[SP_QUEUED] += y - x;
        return true;
    }
    attribute_idle(st, x, y, 0, ns);
    return false;
}

/* When the launch call of correlation id corr returned; INT64_MIN unknown. */
static int64_t launch_end_of(const step_table *t, int64_t corr)
{
    if (corr < 0 || t->n_launch_end == 0)
        return INT64_MIN;
    size_t i = first_at_least(t->launch_end, t->n_launch_end, 2, 0, corr);
    return i < t->n_launch_end && t->launch_end[2 * i] == corr ? t->launch_end[2 * i + 1] : INT64_MIN;
}

/* The GPU idle before the trace's first kernel once its launch had returned:
 * the GPU starting up (context and module initialisation on first use), no
 * wait of the host's. Counted as set-up; the gap before the launch returned
 * is the host's, as any. A Quadro RTX 6000's first CNN+GRU inference: its
 * first kernels, launched at 1.2 ms, started at 43.9 ms while the host sat in
 * a cudaStreamSynchronize, and read "Synchronization bound, 69.4%". Returns
 * where the host's part of the gap ends. */
static int64_t gpu_startup(const tr_state *st, step_table *t, const int64_t *w, int64_t frontier, int64_t s,
                           int64_t *ns)
{
    /* Only in a trace without steps (a cold first pass; a schedule's trace comes after warm-up) and 10 ms or
     * more: a trace that starts mid-loop has its first kernel queued behind work it did not record, for a
     * step's time at most */
    const tr_device *d = &st->devices[t->device];
    if (st->n_steps > 0 || w != d->ev) /* not the trace's first GPU event */
        return s;
    int64_t le = launch_end_of(t, w[2]);
    if (le == INT64_MIN || le >= s || s - imax(le, frontier) < TR_LONG_LAUNCH_NS)
        return s;
    int64_t from = imax(le, frontier);
    ns[SP_SETUP] += s - from;
    /* the stage's time: set-up calls' host time, and this where no set-up call covers it */
    const tr_ivlist *calls = &st->host_iv[TR_HOST_SETUP];
    int64_t covered = 0;
    for (size_t i = 0; i < calls->n; i++)
        covered += imax(0, imin(calls->iv[2 * i + 1], s) - imax(calls->iv[2 * i], from));
    t->startup_ns += s - from - covered;
    return from;
}

/* Whether the kernel of correlation id corr was queued at `at`: its launch
 * call had returned by then (HTA's idle-time breakdown counts a gap as host
 * wait only when the next kernel's launch came after it; an unknown launch
 * is the host's). */
static bool queued_at(const step_table *t, int64_t corr, int64_t at)
{
    int64_t end = launch_end_of(t, corr);
    return end != INT64_MIN && end <= at;
}

/* A gap [x, y) between compute kernels: the copies and collectives in it
 * (t->t2 from *from on, a cursor that only moves forward as the gaps come in
 * order), the rest to the queue (`queued`: the kernel after the gap was
 * already launched) or to what the host did. */
static bool fill_gap(const tr_state *st, const step_table *t, size_t *from, int64_t x, int64_t y, bool queued,
                     int64_t *ns)
{
    bool waited = false;
    if (y <= x)
        return false;
    while (*from < t->n_t2 && t->t2[3 * *from + 1] <= x)
        (*from)++;
    int64_t at = x;
    for (size_t i = *from; i < t->n_t2 && t->t2[3 * i] < y; i++) {
        int64_t lo = imax(t->t2[3 * i], at), hi = imin(t->t2[3 * i + 1], y);
        if (hi <= lo)
            continue;
        waited |= idle_to(st, at, lo, queued, ns);
        ns[t->t2[3 * i + 2]] += hi - lo;
        at = hi;
    }
    return idle_to(st, at, y, queued, ns) || waited;
}

/* t->t2 from the main device's events (sorted by start): each copy or
 * collective's time not covered by an earlier-starting one. */
static bool transfers_build(const tr_state *st, step_table *t)
{
    const tr_device *d = &st->devices[t->device];
    t->t2 = malloc(3 * sizeof *t->t2 * (d->n_ev ? d->n_ev : 1));
    if (t->t2 == NULL)
        return false;
    int64_t frontier = INT64_MIN;
    for (size_t i = 0; i < d->n_ev; i++) {
        const int64_t *w = d->ev + i * TR_EV_WORDS;
        int cls = ev_class(w);
        int64_t e = w[0] + ev_dur(w);
        if (!yields_to_compute(t, cls) || e <= frontier)
            continue;
        t->t2[3 * t->n_t2] = imax(w[0], frontier);
        t->t2[3 * t->n_t2 + 1] = e;
        t->t2[3 * t->n_t2 + 2] = t->sp_class[cls];
        t->n_t2++;
        frontier = e;
    }
    return true;
}

/* One window [a, b) of the main device's raw events (sorted by start): the
 * compute kernels' busy union is split among classes by a sweep (time newly
 * covered goes to the kernel that covers it first, so overlapping streams
 * count once), the gaps between them to copies and collectives, then to
 * what the host did. */
static void step_window(const tr_state *st, step_table *t, int64_t maxdur, int64_t a, int64_t b,
                        int64_t *ns)
{
    int64_t frontier = a;
    if (t->device < 0) {
        attribute_idle(st, a, b, 0, ns);
        return;
    }
    const tr_device *d = &st->devices[t->device];
    size_t lo = first_at_least(d->ev, d->n_ev, TR_EV_WORDS, 0, a - maxdur);
    size_t gap_from = first_at_least(t->t2, t->n_t2, 3, 1, a + 1); /* the first copy or collective ending after a */
    for (size_t i = lo; i < d->n_ev; i++) {
        const int64_t *w = d->ev + i * TR_EV_WORDS;
        if (w[0] >= b)
            break;
        int cls = ev_class(w);
        if (w[0] >= a && cls != TR_CLASS_MEMCPY && cls != TR_CLASS_MEMSET) {
            t->kernels++;
            int bin = ev_dur(w) > 0 ? (int)(log2((double)ev_dur(w)) * 16) : 0;
            t->dur_hist[bin < 0 ? 0 : bin >= DUR_BINS ? DUR_BINS - 1 : bin]++;
        }
        if (yields_to_compute(t, cls))
            continue;
        int64_t s = imax(w[0], a), e = imin(w[0] + ev_dur(w), b);
        if (e <= frontier)
            continue;
        if (s > frontier) {
            int64_t host_end = gpu_startup(st, t, w, frontier, s, ns);
            t->queued_gaps += fill_gap(st, t, &gap_from, frontier, host_end, queued_at(t, w[2], frontier), ns);
            frontier = s;
        }
        ns[t->sp_class[cls]] += e - frontier;
        frontier = e;
    }
    (void)fill_gap(st, t, &gap_from, frontier, b, false, ns);
}

static void step_part_json(cJSON *arr, int p, int64_t ns, double per, double wall)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    add_str(o, "id", sp_info[p].id);
    add_str(o, "name", sp_info[p].name);
    add_str(o, "kind", sp_info[p].kind);
    add_str(o, "class", sp_info[p].cls);
    add_num(o, "seconds", sec(ns) / per);
    add_num(o, "share", wall > 0 ? (double)ns / wall : 0);
}

/* The main device: the one with the most GPU time (its events' durations);
 * the step table and run.gpu_utilization describe it. */
static int main_device(const tr_state *st)
{
    int best = -1;
    int64_t best_ns = -1;
    for (int d = 0; d < st->n_devices; d++) {
        int64_t ns = 0;
        for (int c = 0; c < st->rules->n_classes; c++)
            ns += st->devices[d].class_ns[c];
        if (ns > best_ns) {
            best_ns = ns;
            best = d;
        }
    }
    return best;
}

static bool step_table_build(analysis *a, cJSON **step_objs, size_t n_emit)
{
    tr_state *st = a->st;
    step_table *t = a->tablep;
    memset(t, 0, sizeof *t);
    t->device = main_device(st);
    t->launch_end = a->launch_end;
    t->n_launch_end = a->n_launch_end;
    for (int c = 0; c < TR_MAX_CLASSES; c++)
        t->sp_class[c] = sp_of_class(st->rules, c);
    if (t->device >= 0 && !transfers_build(st, t))
        return false;
    for (int k = 0; k < TR_N_HOST; k++) {
        tr_ivlist *l = &st->host_iv[k];
        l->n = mb_tr_merge_intervals(l->iv, l->n);
    }
    /* how far before a window a compute kernel that reaches into it can
     * start (copies and collectives come from t2: a collective as long as
     * the run would make every window look back to the start) */
    int64_t maxdur = 0;
    if (t->device >= 0) {
        const tr_device *d = &st->devices[t->device];
        for (size_t i = 0; i < d->n_ev; i++)
            if (!yields_to_compute(t, ev_class(d->ev + i * TR_EV_WORDS)))
                maxdur = imax(maxdur, ev_dur(d->ev + i * TR_EV_WORDS));
    }
    int64_t ns[SP_N];
    if (st->n_steps == 0) {
        if (st->complete_events == 0)
            return true;
        step_window(st, t, maxdur, st->span_start, st->span_end, t->ns);
        t->wall = st->span_end - st->span_start;
        t->windows = 1;
    }
    for (size_t s = 0; s < st->n_steps; s++) {
        memset(ns, 0, sizeof ns);
        int64_t s0 = st->steps[s].start, s1 = st->steps[s].end;
        step_window(st, t, maxdur, s0, s1, ns);
        for (int p = 0; p < SP_N; p++)
            t->ns[p] += ns[p];
        t->wall += s1 - s0;
        t->windows++;
        if (s < n_emit) {
            cJSON *parts = add_obj(step_objs[s], "parts");
            for (int p = 0; p < SP_N; p++)
                if (ns[p] > 0)
                    add_num(parts, sp_info[p].id, sec(ns[p]));
        }
    }
    return true;
}

/* The evidence's "step" object: mean seconds per step of every part and its
 * share of the step; shares add up to 1 (the parts partition each step). */
static void step_table_json(analysis *a)
{
    const step_table *t = a->tablep;
    tr_state *st = a->st;
    /* No GPU events: nothing to split a step into (not "idle 100%"). */
    if (t->windows == 0 || t->wall <= 0 || t->device < 0) {
        cJSON_AddNullToObject(a->ev, "step");
        return;
    }
    cJSON *o = add_obj(a->ev, "step");
    add_str(o, "window", mb_tr_window(st));
    add_num(o, "steps", (double)t->windows);
    double per = (double)t->windows, wall = (double)t->wall;
    add_num(o, "seconds", sec(t->wall) / per);
    if (t->device >= 0)
        add_num(o, "device", (double)st->devices[t->device].id);
    else
        cJSON_AddNullToObject(o, "device");
    int64_t busy = 0;
    for (int p = 0; p < SP_FIRST_IDLE; p++)
        busy += t->ns[p];
    add_num(o, "gpu_busy_share", (double)busy / wall);
    add_num(o, "gpu_idle_share", 1 - (double)busy / wall);
    add_num(o, "kernels_per_step", (double)t->kernels / per);
    long long half = (t->kernels + 1) / 2, seen = 0;
    for (int i = 0; i < DUR_BINS && t->kernels > 0; i++) {
        seen += t->dur_hist[i];
        if (seen >= half) { /* the bin's geometric middle */
            add_num(o, "median_kernel_seconds", exp2((i + 0.5) / 16) / 1e9);
            break;
        }
    }
    if (t->kernels == 0)
        cJSON_AddNullToObject(o, "median_kernel_seconds");
    /* cuDNN's NCHW<->NHWC conversions around convolutions (channels_last
     * removes them), in whichever part their kernels' ops put them */
    const tr_device *dev = &st->devices[t->device];
    cJSON *lay = add_obj(o, "layout_conversions");
    add_num(lay, "kernels", (double)dev->step_layout_count / per);
    add_num(lay, "seconds", sec(dev->step_layout_ns) / per);
    add_num(lay, "share", (double)dev->step_layout_ns / wall);
    /* GEMMs and convolutions in fp32 on the CUDA cores, by their kernels'
     * names: what TF32 or lower precision would move to the tensor cores,
     * known with or without recorded types */
    cJSON *fp32 = add_obj(o, "fp32_math");
    add_num(fp32, "kernels", (double)dev->step_fp32_count / per);
    add_num(fp32, "seconds", sec(dev->step_fp32_ns) / per);
    add_num(fp32, "share", (double)dev->step_fp32_ns / wall);
    /* kernels whose grid leaves half the GPU's SMs idle, and the one that
     * took the most time in the trace */
    cJSON *small = add_obj(o, "small_grids");
    add_num(small, "kernels", (double)dev->step_small_count / per);
    add_num(small, "seconds", sec(dev->step_small_ns) / per);
    add_num(small, "share", (double)dev->step_small_ns / wall);
    if (dev->sms > 0)
        add_num(small, "sms", dev->sms);
    else
        cJSON_AddNullToObject(small, "sms");
    const tr_named_stat *top = NULL;
    for (int i = 0; i < st->small_grids.n; i++)
        if (top == NULL || st->small_grids.s[i].ns > top->ns)
            top = &st->small_grids.s[i];
    add_str(small, "largest", top ? top->name : NULL);
    add_num(small, "largest_seconds", top ? sec(top->ns) : 0);
    cJSON *parts = add_arr(o, "parts");
    for (int p = 0; p < SP_N; p++)
        if (t->ns[p] > 0)
            step_part_json(parts, p, t->ns[p], per, wall);
}

/* ---- the timeline ------------------------------------------------------------------ */

/* Takes [s, e) out of an unmerged interval list (its order does not matter). */
static void drop_interval(tr_ivlist *iv, int64_t s, int64_t e)
{
    for (size_t j = 0; j < iv->n; j++)
        if (iv->iv[2 * j] == s && iv->iv[2 * j + 1] == e) {
            iv->iv[2 * j] = iv->iv[2 * (iv->n - 1)];
            iv->iv[2 * j + 1] = iv->iv[2 * (iv->n - 1) + 1];
            iv->n--;
            return;
        }
}

/* A closing synchronize: a sync call that starts after the steps' last
 * launch. It waits for the GPU to finish what the host queued ahead; no step
 * made it. Taken out of the step table's sync list (before it is merged) and
 * counted apart. */
static void set_closing_syncs(analysis *a)
{
    tr_state *st = a->st;
    tr_ivlist *calls = &st->sync_calls, *iv = &st->host_iv[TR_HOST_SYNC];
    for (size_t i = 0; i < calls->n; i++) {
        int64_t s = calls->iv[2 * i], e = calls->iv[2 * i + 1];
        if (s < a->tl.last_launch)
            continue;
        a->closing_syncs++;
        a->closing_ns += e - s;
        for (size_t k = 0; k < st->n_steps; k++) /* the part inside the host's windows */
            a->closing_in_win_ns += imax(0, imin(e, a->host_win[2 * k + 1]) - imax(s, a->host_win[2 * k]));
        drop_interval(iv, s, e);
    }
}

/* Calls of a raw interval list that start in the merged windows w: their
 * number, and their time added to *ns. */
static long long calls_in(const tr_ivlist *l, const int64_t *w, size_t nw, int64_t *ns)
{
    long long n = 0;
    for (size_t i = 0; i < l->n; i++)
        if (in_windows(w, nw, l->iv[2 * i])) {
            n++;
            *ns += l->iv[2 * i + 1] - l->iv[2 * i];
        }
    return n;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* CUDA graph replays (cudaGraphLaunch) that start in the merged windows w (st->graph_corrs sorted by
 * mb_tr_first_launches). */
static long long graph_replays_in(const tr_state *st, const int64_t *w, size_t nw)
{
    long long replays = 0;
    for (size_t i = 0; i < st->n_launches && st->n_graph_corrs > 0; i++) {
        const tr_launch *l = &st->launches[i];
        replays += l->corr >= 0 && in_windows(w, nw, l->ts) &&
                   bsearch(&l->corr, st->graph_corrs, st->n_graph_corrs, sizeof *st->graph_corrs, cmp_i64);
    }
    return replays;
}

/* How many of the host's step windows hold a call of the raw list l. */
static long long steps_with_calls(const analysis *a, const tr_ivlist *l)
{
    const tr_state *st = a->st;
    long long n = 0;
    for (size_t k = 0; k < st->n_steps; k++) {
        int64_t s0 = a->host_win ? a->host_win[2 * k] : st->steps[k].start;
        int64_t s1 = a->host_win ? a->host_win[2 * k + 1] : st->steps[k].end;
        for (size_t i = 0; i < l->n; i++)
            if (l->iv[2 * i] >= s0 && l->iv[2 * i] < s1) {
                n++;
                break;
            }
    }
    return n;
}

/* a->calls: the host calls in the host's own step windows (the ProfilerSteps
 * even when the GPU's timeline cuts the steps: a call is the step's whose
 * host code made it), before the step table merges the lists. A trace whose
 * steps leave its set-up out (steps_from_optimizer) read a 726-ms first
 * launch outside them as "98.2 us/launch" of its steps. */
static int host_calls_in_steps(analysis *a, mb_err *err)
{
    tr_state *st = a->st;
    host_calls *c = &a->calls;
    /* set-up intervals nest (torch.compile's regions, a first launch inside one): their time is their union,
     * their count the calls (the set-up table's, which names the outermost region) */
    tr_ivlist *setup = &st->host_iv[TR_HOST_SETUP];
    if (st->n_steps == 0) {
        setup->n = mb_tr_merge_intervals(setup->iv, setup->n);
        int64_t setup_ns = 0;
        for (size_t i = 0; i < setup->n; i++)
            setup_ns += setup->iv[2 * i + 1] - setup->iv[2 * i];
        *c = (host_calls){.launches = st->launch.count, .launch_ns = st->launch.ns,
                          .replays = (long long)st->n_graph_corrs,
                          .long_launches = st->long_launches, .long_launch_ns = st->long_launch_ns,
                          .longest_launch_ns = st->longest_launch_ns, .syncs = st->sync.count - a->closing_syncs,
                          .sync_ns = st->sync.ns - a->closing_ns, .blocking = st->blocking.count,
                          .blocking_ns = st->blocking.ns,
                          .data = st->dataloader_count, .data_ns = st->dataloader_ns,
                          .setup = st->setup.count, .setup_ns = setup_ns,
                          .coll = st->coll_calls.n > 0 ? (long long)st->coll_calls.n : st->coll_host_count,
                          .ops = st->cpu_op_events};
        const tr_ivlist *waits = &st->host_iv[TR_HOST_SYNC];
        for (size_t i = 0; i < waits->n; i++)
            c->longest_wait_ns = imax(c->longest_wait_ns, waits->iv[2 * i + 1] - waits->iv[2 * i]);
        return MB_OK;
    }
    int64_t *w = malloc(sizeof *w * 2 * st->n_steps);
    if (w == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    for (size_t k = 0; k < st->n_steps; k++) {
        w[2 * k] = a->host_win ? a->host_win[2 * k] : st->steps[k].start;
        w[2 * k + 1] = a->host_win ? a->host_win[2 * k + 1] : st->steps[k].end;
    }
    size_t nw = mb_tr_merge_intervals(w, st->n_steps);
    /* in file order still, one interval a launch (st->launches) */
    const tr_ivlist *launch = &st->host_iv[TR_HOST_LAUNCH];
    for (size_t i = 0; i < launch->n; i++) {
        int64_t s = launch->iv[2 * i], d = launch->iv[2 * i + 1] - s;
        if (!in_windows(w, nw, s))
            continue;
        c->launches++;
        c->launch_ns += d;
        if (st->launch_setup && i < st->n_launches ? st->launch_setup[i] : d >= TR_LONG_LAUNCH_NS) {
            c->long_launches++;
            c->long_launch_ns += d;
            c->longest_launch_ns = imax(c->longest_launch_ns, d);
        }
    }
    /* the sync list holds the sync calls and the blocking copies, less the
     * closing synchronize; sync_calls the sync calls alone, with it */
    int64_t waits_ns = 0;
    long long waits = calls_in(&st->host_iv[TR_HOST_SYNC], w, nw, &waits_ns);
    for (size_t i = 0; i < st->host_iv[TR_HOST_SYNC].n; i++) {
        const int64_t *iv = st->host_iv[TR_HOST_SYNC].iv + 2 * i;
        if (in_windows(w, nw, iv[0]) && !(a->host_win && iv[0] >= a->tl.last_launch))
            c->longest_wait_ns = imax(c->longest_wait_ns, iv[1] - iv[0]);
    }
    for (size_t i = 0; i < st->sync_calls.n; i++) {
        int64_t s = st->sync_calls.iv[2 * i];
        if (in_windows(w, nw, s) && !(a->host_win && s >= a->tl.last_launch)) {
            c->syncs++;
            c->sync_ns += st->sync_calls.iv[2 * i + 1] - s;
        }
    }
    c->blocking = waits - c->syncs;
    c->blocking_ns = waits_ns - c->sync_ns;
    for (size_t i = 0; i < st->n_op_ts; i++)
        c->ops += in_windows(w, nw, st->op_ts[i]);
    c->data = calls_in(&st->host_iv[TR_HOST_DATA], w, nw, &c->data_ns);
    int64_t nested_ns;
    c->setup = calls_in(setup, w, nw, &nested_ns);
    setup->n = mb_tr_merge_intervals(setup->iv, setup->n);
    calls_in(setup, w, nw, &c->setup_ns);
    c->coll = calls_in(&st->host_iv[TR_HOST_COLL], w, nw, &c->coll_ns);
    if (st->coll_calls.n > 0) { /* the calls, not every op nested in them */
        int64_t named_ns = 0;
        c->coll = calls_in(&st->coll_calls, w, nw, &named_ns);
    }
    c->setup_steps = steps_with_calls(a, &st->host_iv[TR_HOST_SETUP]);
    c->replays = graph_replays_in(st, w, nw);
    free(w);
    return MB_OK;
}

/* The end of each kernel launch call by its correlation id, while the
 * launches and their intervals are in file order (before attribute_kernels
 * sorts the launches and the step table merges the intervals): a gap before
 * a kernel whose launch had returned is the GPU's, not the host's. */
static bool launch_ends(analysis *a)
{
    tr_state *st = a->st;
    const tr_ivlist *liv = &st->host_iv[TR_HOST_LAUNCH];
    size_t nl = st->n_launches <= liv->n ? st->n_launches : liv->n, n = 0;
    a->launch_end = malloc(2 * sizeof *a->launch_end * (nl ? nl : 1));
    if (a->launch_end == NULL)
        return false;
    for (size_t i = 0; i < nl; i++)
        if (st->launches[i].corr >= 0) {
            a->launch_end[2 * n] = st->launches[i].corr;
            a->launch_end[2 * n + 1] = liv->iv[2 * i + 1];
            n++;
        }
    qsort(a->launch_end, n, 2 * sizeof *a->launch_end, cmp_pair);
    a->n_launch_end = n;
    return true;
}

/* Which timeline cuts the steps (trace_timeline.c): the host's ProfilerSteps,
 * or, when the host runs ahead of the GPU, the GPU's. Then st->steps hold the
 * GPU's windows (their own kept in host_win for the evidence), and every
 * figure per step below uses them. Needs the main device's events sorted and
 * the launches in file order (their intervals in host_iv[LAUNCH] are in the
 * same order). */
static int choose_timeline(analysis *a, int device, mb_err *err)
{
    tr_state *st = a->st;
    if (st->n_steps == 0 || device < 0)
        return MB_OK;
    const tr_device *d = &st->devices[device];
    const tr_ivlist *liv = &st->host_iv[TR_HOST_LAUNCH];
    size_t nl = st->n_launches <= liv->n ? st->n_launches : liv->n, nq = st->n_async_copies;
    tr_call *calls = malloc(sizeof *calls * (nl + nq + 1));
    tr_gpu_span *spans = malloc(sizeof *spans * (d->n_ev ? d->n_ev : 1));
    int64_t *steps = malloc(sizeof *steps * 2 * st->n_steps);
    int rc = MB_OK;
    if (calls == NULL || spans == NULL || steps == NULL)
        goto oom;
    for (size_t i = 0; i < nl; i++)
        calls[i] = (tr_call){ .corr = st->launches[i].corr, .ts = liv->iv[2 * i], .end = liv->iv[2 * i + 1] };
    /* the copies and memsets a step's host code enqueued are its GPU work too (the kineto ResNet-50 sample: the
     * first step's batch copy, and the DataLoader wait before it, fell before its window) */
    for (size_t i = 0; i < nq; i++)
        calls[nl++] = (tr_call){ .corr = st->async_copies[i].corr, .ts = st->async_copies[i].ts,
                                 .end = st->async_copies[i].end };
    for (size_t i = 0; i < d->n_ev; i++) {
        const int64_t *w = d->ev + i * TR_EV_WORDS;
        spans[i] = (tr_gpu_span){ .corr = w[2], .start = w[0], .end = w[0] + ev_dur(w) };
    }
    for (size_t k = 0; k < st->n_steps; k++) {
        steps[2 * k] = st->steps[k].start;
        steps[2 * k + 1] = st->steps[k].end;
    }
    if (!mb_tr_timeline(steps, st->n_steps, calls, nl, spans, d->n_ev, &a->tl))
        goto oom;
    if (a->tl.gpu) {
        for (size_t k = 0; k < st->n_steps; k++) {
            st->steps[k].start = a->tl.win[2 * k];
            st->steps[k].end = a->tl.win[2 * k + 1];
        }
        a->host_win = steps;
        steps = NULL;
        set_closing_syncs(a);
    }
    goto done;
oom:
    rc = mb_errf(err, MB_ESYS, "out of memory");
done:
    free(calls);
    free(spans);
    free(steps);
    return rc;
}

/* The stages hold what the steps hold, as the step table does: the GPU
 * events that start in a step's window. A trace also records GPU work
 * outside them: kernels launched before the profiler's active steps that ran
 * into them (a host running ahead; Kineto keeps the kernel, not its launch
 * call), or work after the last step. Counted in every stage, it read as
 * "no launch call joins them" and took exposed time from the step's own
 * kernels (TraceLens's H100 Qwen1.5 trace: 436 kernels, 14 ms before the
 * step's GPU work). The devices' step_* totals and the collectives are
 * counted over the windows (without steps: the whole trace);
 * attribute_kernels skips the kernels outside them. The devices' whole-trace
 * totals stay the device's evidence. */
static int count_in_steps(analysis *a, mb_err *err)
{
    tr_state *st = a->st;
    if (st->n_steps > 0 && st->n_devices > 0) {
        a->win = malloc(sizeof *a->win * 2 * st->n_steps);
        if (a->win == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
        for (size_t k = 0; k < st->n_steps; k++) {
            a->win[2 * k] = st->steps[k].start;
            a->win[2 * k + 1] = st->steps[k].end;
        }
        a->n_win = mb_tr_merge_intervals(a->win, st->n_steps);
    } else if (st->pre_window_events > 0) { /* the run's one window, from where trim_pre_window_work set it */
        if ((a->win = malloc(sizeof *a->win * 2)) == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
        a->win[0] = st->span_start;
        a->win[1] = INT64_MAX;
        a->n_win = 1;
    }
    long long out_n = 0;
    int64_t out_ns = 0, in_ns = 0;
    for (int d = 0; d < st->n_devices; d++) {
        tr_device *dev = &st->devices[d];
        memset(dev->step_class_ns, 0, sizeof dev->step_class_ns);
        memset(dev->step_class_count, 0, sizeof dev->step_class_count);
        memset(dev->step_copies, 0, sizeof dev->step_copies);
        memset(&dev->step_memset, 0, sizeof dev->step_memset);
        dev->step_layout_ns = dev->step_fp32_ns = dev->step_small_ns = 0;
        dev->step_layout_count = dev->step_fp32_count = dev->step_small_count = 0;
        for (size_t i = 0; i < dev->n_ev; i++) {
            const int64_t *w = dev->ev + i * TR_EV_WORDS;
            if (!in_windows(a->win, a->n_win, w[0])) {
                out_n++;
                out_ns += ev_dur(w);
                continue;
            }
            dev->step_class_ns[ev_class(w)] += ev_dur(w);
            dev->step_class_count[ev_class(w)]++;
            dev->step_layout_ns += ev_layout(w) ? ev_dur(w) : 0;
            dev->step_layout_count += ev_layout(w);
            dev->step_fp32_ns += ev_fp32(w) ? ev_dur(w) : 0;
            dev->step_fp32_count += ev_fp32(w);
            dev->step_small_ns += ev_small_grid(w) ? ev_dur(w) : 0;
            dev->step_small_count += ev_small_grid(w);
            in_ns += ev_dur(w);
        }
    }
    for (int c = 0; c < st->n_colls; c++) {
        tr_coll_stat *cs = &st->colls[c];
        cs->calls = cs->sized = 0;
        cs->bytes = 0;
        cs->ns = cs->sized_ns = 0;
    }
    st->nccl_kernels_unsized = 0;
    for (size_t i = 0; i < st->n_xfers; i++) {
        const tr_xfer *x = &st->xfers[i];
        if (!in_windows(a->win, a->n_win, x->ts))
            continue;
        tr_device *dev = &st->devices[x->device];
        if (x->kind == TR_XFER_COPY)
            mb_tr_copy_add(&dev->step_copies[x->dir][x->mem], x->dur, x->bytes);
        else if (x->kind == TR_XFER_MEMSET)
            mb_tr_copy_add(&dev->step_memset, x->dur, x->bytes);
        else
            mb_tr_coll_add(st, &st->colls[x->coll], x->dur, x->bytes);
    }
    if (st->n_steps == 0 && out_n > 0) {
        char t[32], h[32];
        mb_fmt_seconds(t, sizeof t, sec(out_ns));
        mb_fmt_seconds(h, sizeof h, sec(imax(0, st->span_start - st->pre_window_end)));
        partial(a,
                "%lld GPU event%s (%s of GPU time) ran before the first host event the trace records, which no "
                "recorded call launched (work from before the profiler's window): left out of the run, with the %s "
                "of nothing recorded after them",
                out_n, out_n == 1 ? "" : "s", t, h);
        return MB_OK;
    }
    /* said when it is more than rounding: 1% of the GPU time in the steps */
    if (out_n > 0 && out_ns * 100 >= in_ns) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, sec(out_ns));
        partial(a,
                "%lld GPU event%s (%s of GPU time) ran outside every step's window (work launched %s, between "
                "steps or after the last): left out of the stages, as of the step table",
                out_n, out_n == 1 ? "" : "s", t,
                st->steps_from_optimizer || st->steps_from_annotation
                    ? "in the set-up before the first step"
                    : "before the profiler's first active step");
    }
    return MB_OK;
}

/* Time in synchronize calls that start inside a ProfilerStep before its
 * first launch (tl.gpu); -1 when out of memory. */
static int64_t leading_sync_ns(const analysis *a)
{
    const tr_state *st = a->st;
    int64_t *first = malloc(sizeof *first * (st->n_steps ? st->n_steps : 1)), sum = 0;
    if (first == NULL)
        return -1;
    for (size_t k = 0; k < st->n_steps; k++)
        first[k] = a->host_win[2 * k + 1];
    for (size_t i = 0; i < st->n_launches; i++) {
        long k = mb_tr_window_of(a->host_win, st->n_steps, st->launches[i].ts);
        if (k >= 0 && st->launches[i].ts < first[k])
            first[k] = st->launches[i].ts;
    }
    const tr_ivlist *calls = &st->sync_calls;
    for (size_t i = 0; i < calls->n; i++) {
        long k = mb_tr_window_of(a->host_win, st->n_steps, calls->iv[2 * i]);
        if (k >= 0)
            sum += imax(0, imin(calls->iv[2 * i + 1], first[k]) - calls->iv[2 * i]);
    }
    free(first);
    return sum;
}

/* The evidence's word on the timeline: which one set the step, and why. */
static void timeline_json(analysis *a, cJSON *step)
{
    tr_state *st = a->st;
    add_str(step, "timeline", a->tl.gpu ? "gpu" : "host");
    if (!a->tl.gpu || a->host_win == NULL)
        return;
    /* the host's own time per step: its windows, less the closing synchronize
     * and the synchronizes before a step's first launch, which wait for
     * earlier steps' GPU work (project_trace.c's host floor, the same) */
    int64_t leading = leading_sync_ns(a);
    if (leading < 0)
        return; /* out of memory: the evidence without the host's time */
    int64_t host = -a->closing_in_win_ns - leading;
    for (size_t k = 0; k < st->n_steps; k++)
        host += a->host_win[2 * k + 1] - a->host_win[2 * k];
    char over[32], lead[32], why[640];
    mb_fmt_seconds(over, sizeof over, sec(a->tl.overrun_mean_ns));
    mb_fmt_seconds(lead, sizeof lead, sec(a->tl.lead_in_ns));
    int n = snprintf(why, sizeof why,
                     "the host runs ahead of the GPU: in %d of %zu steps the GPU work a step launched ends after its "
                     "%s (by %s on average); each step is cut on the GPU's timeline, from the end of the previous "
                     "step's GPU work to the end of its own (kernels belong to the step whose host code launched "
                     "them)", a->tl.overrun, st->n_steps, step_said(st), over);
    if (a->tl.lead_in_ns > 0 && n > 0 && (size_t)n < sizeof why)
        snprintf(why + n, sizeof why - (size_t)n,
                 "; the first starts where the step before it would have ended (its first GPU work less the later "
                 "steps' median head): the %s before that, a first step's lead-in that later steps' runs under the "
                 "GPU's work, is left out", lead);
    add_str(step, "timeline_why", why);
    add_num(step, "lead_in_seconds", sec(a->tl.lead_in_ns));
    add_num(step, "host_seconds", sec(host) / (double)st->n_steps);
    cJSON *cs = add_obj(step, "closing_sync");
    add_num(cs, "count", (double)a->closing_syncs);
    add_num(cs, "seconds", sec(a->closing_ns));
}

/* A trace without steps whose last event is a sync call after the last
 * launch: the profiler's closing synchronize (or the loop's last). It is no
 * sync of the run: left out of the sync list as set_closing_syncs does, and
 * the run's window ends where the GPU's recorded work does, or at the call,
 * whichever is later. A cold 3-D conv model's trace (Quadro RTX 6000): a
 * cudaDeviceSynchronize of 1.38 s from 1.19 s on, the last kernel ending
 * at 1.30 s, read "Synchronization bound, 49.3%", 1.27 s with nothing to
 * wait for. */
static void closing_sync_without_steps(analysis *a)
{
    tr_state *st = a->st;
    if (st->n_steps > 0 || st->n_devices == 0 || st->n_launches == 0)
        return;
    int64_t last_launch = INT64_MIN, last_gpu = INT64_MIN;
    for (size_t i = 0; i < st->n_launches; i++)
        last_launch = imax(last_launch, st->launches[i].ts);
    for (int d = 0; d < st->n_devices; d++)
        for (size_t i = 0; i < st->devices[d].n_ev; i++) {
            const int64_t *w = st->devices[d].ev + i * TR_EV_WORDS;
            last_gpu = imax(last_gpu, w[0] + ev_dur(w));
        }
    tr_ivlist *calls = &st->sync_calls, *iv = &st->host_iv[TR_HOST_SYNC];
    for (size_t i = 0; i < calls->n; i++) {
        int64_t s = calls->iv[2 * i], e = calls->iv[2 * i + 1];
        if (s < last_launch || e < st->span_end)
            continue;
        a->closing_syncs++;
        a->closing_ns += e - s;
        st->span_end = imax(s, last_gpu);
        drop_interval(iv, s, e);
        return;
    }
}

/* ---- exposed time -------------------------------------------------------------- */

/* Every stage's exposed time comes from the step table, so the exposed
 * stages add up to the steps whatever ran outside them: a GPU part's time
 * in the windows is shared among its stages in proportion to their time; a
 * host kind's GPU idle time goes to its stage (a launch overlapping GPU
 * work, a sync waiting for busy kernels: hidden); idle time a stage cannot
 * hold (it is more than the stage's own time) joins "host code (GPU idle)".
 * Returns that leftover. */
static int64_t expose_stages(analysis *a)
{
    const step_table *t = a->tablep;
    mb_run *run = a->run;
    double part_seconds[SP_N] = { 0 };
    int n = run->n_stages < MAX_TRACE_STAGES ? run->n_stages : MAX_TRACE_STAGES;
    for (int i = 0; i < n; i++)
        if (a->stage_part[i] >= 0 && a->stage_part[i] < SP_FIRST_IDLE)
            part_seconds[a->stage_part[i]] += run->stages[i].seconds;
    int64_t left = 0;
    for (int i = 0; i < n; i++) {
        int p = a->stage_part[i];
        mb_stage *s = &run->stages[i];
        if (p < 0 || t->device < 0)
            continue;
        double part = sec(t->ns[p]);
        s->has_exposed = true;
        if (p < SP_FIRST_IDLE) {
            s->exposed_seconds = part_seconds[p] > part ? s->seconds * part / part_seconds[p] : s->seconds;
        } else {
            s->exposed_seconds = part < s->seconds ? part : s->seconds;
            left += t->ns[p] - (int64_t)llround(s->exposed_seconds * 1e9);
        }
    }
    /* a host kind with idle time and no stage (blocking copies without a
     * sync call, every sync the closing one) */
    for (int p = SP_FIRST_IDLE; p < SP_N; p++) {
        bool staged = false;
        for (int i = 0; i < n; i++)
            staged |= a->stage_part[i] == p;
        if (!staged && p != SP_HOST && p != SP_HCOLL)
            left += t->ns[p];
    }
    return left > 0 ? left : 0;
}

/* ---- stages ------------------------------------------------------------------------ */

/* Adds a stage whose exposed time comes from the step table's `part` (-1:
 * none). */
static int add_stage(analysis *a, mb_stage *s, int part, mb_err *err)
{
    if (s->device == NULL)
        s->device = "gpu";
    if (a->run->n_stages >= MAX_TRACE_STAGES)
        return mb_errf(err, MB_ESYS, "more than %d stages from one trace", MAX_TRACE_STAGES);
    a->stage_part[a->run->n_stages] = part;
    return mb_run_add_stage(a->run, s, err);
}

typedef struct flop_group {
    int kind;           /* TR_OP_GEMM, TR_OP_CONV, TR_OP_ATTN */
    const char *dtype;
    double flops;
    int64_t ns;
    long long kernels, ops;
    long long linked;   /* of the ops: backward ops and autograd nodes with their forward op's FLOPs */
    long long from_bwd; /* of the ops: forward convolutions with FLOPs from their backward op */
    double bytes;       /* GEMMs: their bytes moved at least (tr_flop_op.bytes) */
    long long no_bytes; /* ... ops without them: the group's bytes unknown */
} flop_group;

/* The family whose FLOPs an op counts: an autograd node given FLOPs counts
 * its forward op's. */
static int op_family(const tr_flop_op *op)
{
    return op->kind == TR_OP_BWD ? op->family : op->kind;
}

static int flop_groups(const tr_state *st, flop_group *g, int max)
{
    int n = 0;
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        const tr_flop_op *op = &st->flop_ops[i];
        int kind = op_family(op);
        if (!tensor_family(kind) || op->flags & TR_OPF_PARENT || op->kernels == 0 || op->flops < 0)
            continue;
        const char *dtype = mb_tr_dtype_name(op->dtype);
        int k = 0;
        while (k < n && !(g[k].kind == kind && g[k].dtype == dtype))
            k++;
        if (k == n) {
            if (n == max)
                continue;
            g[n++] = (flop_group){.kind = kind, .dtype = dtype};
        }
        g[k].flops += op->flops;
        g[k].ns += op->gpu_ns;
        g[k].kernels += op->kernels;
        g[k].ops++;
        g[k].linked += (op->flags & TR_OPF_LINKED) != 0;
        g[k].from_bwd += (op->flags & TR_OPF_FROM_BWD) != 0;
        g[k].bytes += op->bytes;
        g[k].no_bytes += op->bytes <= 0;
    }
    return n;
}

static const char *family_component(int kind)
{
    return kind == TR_OP_GEMM ? "gemm" : kind == TR_OP_CONV ? "conv" : "attention";
}

/* The step-table part a family's kernels are busy in (their exposed time). */
static int family_part(int kind)
{
    return kind == TR_OP_GEMM ? SP_GEMM : kind == TR_OP_CONV ? SP_CONV : SP_ATTN;
}

/* FLOP stages: gemm, conv and attention ops with FLOPs (from their shapes
 * or their forward op's), one stage per family and dtype. Attention has no
 * benchmark of its own: configs/gap/matching.ini holds it against the GEMM
 * case of its dtype. */
static int flop_stages(analysis *a, const flop_group *g, int n, cJSON *rates, mb_err *err)
{
    cJSON *arr[TR_N_OP_KINDS] = {NULL};
    arr[TR_OP_GEMM] = add_arr(rates, "gemm");
    arr[TR_OP_CONV] = add_arr(rates, "conv");
    arr[TR_OP_ATTN] = add_arr(rates, "attention");
    for (int i = 0; i < n; i++) {
        int per_kind = 0;
        for (int k = 0; k < n; k++)
            per_kind += g[k].kind == g[i].kind;
        const char *comp = family_component(g[i].kind);
        char name[64], source[320], linked[192] = "";
        if (per_kind > 1)
            snprintf(name, sizeof name, "%s %s", comp, g[i].dtype ? g[i].dtype : "unknown dtype");
        else
            snprintf(name, sizeof name, "%s", comp);
        if (g[i].linked > 0 && g[i].from_bwd > 0)
            snprintf(linked, sizeof linked, " (%lld backward with their forward op's FLOPs, %lld forward with their "
                     "backward op's shapes, by autograd Sequence number)", g[i].linked, g[i].from_bwd);
        else if (g[i].linked > 0)
            snprintf(linked, sizeof linked,
                     " (%lld backward with their forward op's FLOPs, by autograd Sequence number)", g[i].linked);
        else if (g[i].from_bwd > 0)
            snprintf(linked, sizeof linked,
                     " (%lld forward with their backward op's shapes, by autograd Sequence number)", g[i].from_bwd);
        bool tf32 = g[i].dtype && strcmp(g[i].dtype, "tf32") == 0;
        snprintf(source, sizeof source, "trace: %lld %s ops with FLOPs%s, %lld kernels%s", g[i].ops, comp, linked,
                 g[i].kernels, tf32 ? "; fp32 ops whose kernels ran TF32 math (their names say tf32)" : "");
        /* A run without a backward pass convolves forward only: held against the forward cases, not the
         * fastest direction measured (an A100's inference held to cuDNN's bwd_filter case, 1.8x its fwd one) */
        bool forward_only = g[i].kind == TR_OP_CONV && a->st->backward_ops == 0;
        mb_stage s = {.name = name, .component = (char *)comp, .dtype = (char *)g[i].dtype,
                      .direction = forward_only ? "fwd" : NULL, .work = g[i].flops, .work_unit = "flop",
                      .seconds = sec(g[i].ns), .count = g[i].kernels, .source = source,
                      .min_bytes = g[i].kind == TR_OP_GEMM && g[i].no_bytes == 0 ? g[i].bytes : 0};
        int rc = add_stage(a, &s, family_part(g[i].kind), err);
        if (rc != MB_OK)
            return rc;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr[g[i].kind], o);
        add_str(o, "dtype", g[i].dtype);
        add_num(o, "flops", g[i].flops);
        if (g[i].kind == TR_OP_GEMM) /* null: some op's bytes unknown (a backward op with its forward's FLOPs) */
            g[i].no_bytes == 0 ? add_num(o, "bytes", g[i].bytes) : (void)cJSON_AddNullToObject(o, "bytes");
        add_num(o, "seconds", sec(g[i].ns));
        add_num(o, "kernels", (double)g[i].kernels);
        add_num(o, "ops", (double)g[i].ops);
        add_num(o, "linked", (double)g[i].linked);
        add_num(o, "from_backward", (double)g[i].from_bwd);
        add_num(o, "tflops", g[i].ns > 0 ? g[i].flops / (double)g[i].ns / 1e3 : 0);
    }
    return MB_OK;
}

/* ---- why a stage has no work: evidence "unattributed" ------------------------------ */

/* Evidence "unattributed": why `stage` has no work, which gap shows as its hint. */
static void say_why_unattributed(analysis *a, const char *stage, const char *why)
{
    cJSON *u = cJSON_GetObjectItemCaseSensitive(a->ev, "unattributed");
    if (u == NULL)
        u = add_obj(a->ev, "unattributed");
    add_str(u, stage, why);
}

/* No op in the trace recorded shapes: the one cause worth naming. */
static bool no_shapes_at_all(const tr_state *st)
{
    return st->record_shapes == 0 || (st->record_shapes < 0 && st->ops_with_dims == 0);
}

/* The reason text fits the hint gap prints after "no ceiling: " (MB_GAP_WHY_LEN). */
enum { REASON_LEN = 480 };

typedef struct reason_list {
    char text[REASON_LEN];
    size_t at;
    int items;
    bool full; /* a cause did not fit: the rest left out */
    int64_t total;
} reason_list;

/* Appends "what (N% of its time)" when it is at least 1% of the stage; the
 * only cause goes without its 100%. A cause that does not fit whole is
 * left out for "; and other causes" (never a reason cut mid-word). */
static void reason_add(reason_list *r, int64_t ns, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reason_add(reason_list *r, int64_t ns, const char *fmt, ...)
{
    static const char more[] = "; and other causes";
    if (r->total <= 0 || ns * 100 < r->total || r->full)
        return;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char share[32] = "", item[320];
    if (ns < r->total)
        snprintf(share, sizeof share, " (%.0f%% of its time)", 100.0 * (double)ns / (double)r->total);
    int n = snprintf(item, sizeof item, "%s%s%s", r->items ? "; " : "", what, share);
    if (n < 0)
        return;
    if (r->at + (size_t)n + sizeof more > sizeof r->text) {
        r->full = true;
        if (r->items > 0 && r->at + sizeof more <= sizeof r->text) {
            memcpy(r->text + r->at, more, sizeof more);
            r->at += sizeof more - 1;
        }
        return;
    }
    memcpy(r->text + r->at, item, (size_t)n + 1);
    r->at += (size_t)n;
    r->items++;
}

/* What a backward op without shapes lacked to take its forward op's FLOPs. */
static const char *op_link_text(int link)
{
    switch (link) {
    case TR_LINK_NO_FWD:
        return ", and no forward op with shapes has its autograd node's Sequence number";
    case TR_LINK_AMBIGUOUS:
        return ", and several forward ops share its autograd node's Sequence number";
    case TR_LINK_FAMILY:
        return ", and its forward op (by Sequence number) is of another kind";
    default:
        return "";
    }
}

/* ... and an autograd node that launched kernels itself. */
static const char *node_link_text(int link)
{
    return link == TR_LINK_AMBIGUOUS ? " whose Sequence number several forward ops share"
                                     : " whose Sequence number no forward matmul/convolution/attention op with "
                                       "shapes has";
}

/* The reasons of CAUSE_UNCOUNTED (`ns` of a class's time; `u` by the op's
 * reason and link), largest first. */
static void uncounted_reasons(const tr_state *st, const int64_t *u, int64_t ns, reason_list *r)
{
    enum { N_KEYS = (TR_MAX_WHY + 1) * TR_LINK_N };
    bool used[N_KEYS] = {false};
    int64_t left = ns;
    for (int n = 0; n < 3 && left > 0; n++) {
        int key = -1;
        for (int j = 0; j < N_KEYS; j++)
            if (!used[j] && u[j] > 0 && (key < 0 || u[j] > u[key]))
                key = j;
        if (key < 0)
            break;
        used[key] = true;
        left -= u[key];
        int why = key / TR_LINK_N, link = key % TR_LINK_N;
        if (why > 0)
            reason_add(r, u[key], "launched by %s%s", st->why[why - 1], op_link_text(link));
        else
            reason_add(r, u[key], "launched directly by an autograd node%s", node_link_text(link));
    }
    reason_add(r, left, "launched by other ops without usable shapes");
}

/* Why the kernels of class `cls` that no op took have no FLOPs (tensor
 * classes) or bytes: each cause with its share of their time, largest
 * first. Stored under the stage's name in evidence "unattributed"; gap's
 * hint for the stage quotes it (a trace recorded with shapes must not be
 * told to record them). */
static void class_reason(analysis *a, int cls, bool tensor, const char *stage)
{
    const tr_state *st = a->st;
    const kernel_attr *ka = &a->attr;
    reason_list r = {.total = 0};
    for (int k = 0; k < N_CAUSES; k++)
        r.total += ka->cause_ns[cls][k];
    if (r.total <= 0)
        return;
    int at = snprintf(r.text, sizeof r.text, "%s unknown: ", tensor ? "FLOPs" : "bytes");
    r.at = at > 0 ? (size_t)at : 0;
    bool done[N_CAUSES] = {false};
    for (int pass = 0; pass < N_CAUSES; pass++) { /* largest cause first */
        int k = -1;
        for (int j = 0; j < N_CAUSES; j++)
            if (!done[j] && (k < 0 || ka->cause_ns[cls][j] > ka->cause_ns[cls][k]))
                k = j;
        done[k] = true;
        int64_t ns = ka->cause_ns[cls][k];
        if (k == CAUSE_NO_LAUNCH)
            reason_add(&r, ns, "no launch call joins them to an op (no cuda_runtime event with their "
                               "correlation id)");
        else if (k == CAUSE_NO_OP && st->cpu_op_events == 0)
            reason_add(&r, ns, "the trace records no CPU ops to launch them: profile with "
                               "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True");
        else if (k == CAUSE_NO_OP && tensor)
            reason_add(&r, ns, "launched outside any matmul, convolution or attention op (a library's or "
                               "custom kernel)");
        else if (k == CAUSE_NO_OP)
            reason_add(&r, ns, "launched by ops without a byte model ([memory_op] in "
                               "configs/gap/kernel_classes.ini)");
        else if (k == CAUSE_GRAPH)
            reason_add(&r, ns, "replayed from a CUDA graph (cudaGraphLaunch): their ops ran at capture, not in "
                               "this trace: profile with CUDA graphs off (no mode=\"reduce-overhead\") for their %s",
                       tensor ? "FLOPs" : "bytes");
        else if (k == CAUSE_SPARSE)
            reason_add(&r, ns, "launched by sparse matmuls (torch.spmm, torch.mm on a sparse tensor): the trace "
                               "records the sparse operand's dense shape, not its stored entries");
        else if (k == CAUSE_WRAPPER)
            reason_add(&r, ns, "launched directly by a matmul/convolution/attention op around another one "
                               "(aten::matmul around aten::bmm), not by the product itself");
        else if (no_shapes_at_all(st))
            reason_add(&r, ns, "shapes not recorded: profile with record_shapes=True");
        else
            uncounted_reasons(st, ka->uncounted_ns[class_family(st->rules, cls)], ns, &r);
    }
    if (r.items == 0)
        return;
    say_why_unattributed(a, stage, r.text);
}

/* Memory-bound ops with recorded shapes: their bytes (trace_bytes.c) over the
 * GPU time of the memory-bound kernels they launched, one membw stage that
 * gap holds against the membw ceiling. Those whose shapes give no bytes
 * (a TensorList recorded without shapes) keep their kernels in a time-only
 * membw stage that says why. rates.memory_bound says how much of all
 * memory-bound kernel time each covers. */
static int memory_stage(analysis *a, cJSON *rates, mb_err *err)
{
    const tr_state *st = a->st;
    double bytes = 0;
    int64_t ns = 0, all_ns = 0, none_ns = 0, why_ns[TR_MAX_WHY + 1] = {0};
    long long kernels = 0, ops = 0, none_kernels = 0, none_ops = 0;
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        const tr_flop_op *op = &st->flop_ops[i];
        if (op->kind != TR_OP_MEM || op->kernels == 0)
            continue;
        if (op->flops < 0) {
            none_ns += op->gpu_ns;
            none_kernels += op->kernels;
            none_ops++;
            why_ns[op->why] += op->gpu_ns;
            continue;
        }
        bytes += op->flops;
        ns += op->gpu_ns;
        kernels += op->kernels;
        ops++;
    }
    for (int c = 0; c < st->rules->n_classes; c++) {
        if (c == TR_CLASS_NCCL || c == TR_CLASS_MEMCPY || c == TR_CLASS_MEMSET || tensor_class(st->rules, c))
            continue;
        for (int d = 0; d < st->n_devices; d++)
            all_ns += st->devices[d].step_class_ns[c];
    }
    cJSON *o = add_obj(rates, "memory_bound");
    add_num(o, "kernel_seconds", sec(all_ns));
    add_num(o, "shaped_seconds", sec(ns));
    add_num(o, "no_bytes_seconds", sec(none_ns));
    if (all_ns > 0)
        add_num(o, "shaped_share", (double)ns / (double)all_ns);
    else
        cJSON_AddNullToObject(o, "shaped_share");
    int rc = MB_OK;
    if (ops == 0 || ns <= 0) {
        cJSON_AddNullToObject(o, "bytes");
        cJSON_AddNullToObject(o, "bytes_per_s");
    } else {
        add_num(o, "bytes", bytes);
        add_num(o, "bytes_per_s", bytes / sec(ns));
        add_num(o, "kernels", (double)kernels);
        add_num(o, "ops", (double)ops);
        char source[192];
        snprintf(source, sizeof source,
                 "trace: %lld memory-bound ops with recorded shapes, %lld kernels (bytes: inputs + output, a "
                 "lower bound)",
                 ops, kernels);
        mb_stage s = {.name = MB_MEMBOUND_STAGE, .component = "membw", .work = bytes, .work_unit = "byte",
                      .seconds = sec(ns), .count = kernels, .source = source};
        rc = add_stage(a, &s, SP_MEM, err);
    }
    if (rc != MB_OK || none_kernels == 0)
        return rc;
    char name[64], source[192];
    snprintf(name, sizeof name, "%s (bytes unknown)", MB_MEMBOUND_STAGE);
    snprintf(source, sizeof source, "trace: %lld memory-bound ops whose shapes give no bytes, %lld kernels (time "
             "only)", none_ops, none_kernels);
    mb_stage s = {.name = name, .component = "membw", .work = sec(none_ns), .work_unit = "s",
                  .seconds = sec(none_ns), .count = none_kernels, .source = source};
    rc = add_stage(a, &s, SP_MEM, err);
    /* the reasons behind most of its time, for gap's hint */
    reason_list r = {.total = none_ns};
    if (no_shapes_at_all(st))
        snprintf(r.text, sizeof r.text, "bytes unknown: shapes not recorded: profile with record_shapes=True");
    else {
        int at = snprintf(r.text, sizeof r.text, "bytes unknown: ");
        r.at = at > 0 ? (size_t)at : 0;
        bool used[TR_MAX_WHY + 1] = {false};
        int64_t left = none_ns;
        for (int n = 0; n < 3; n++) {
            int w = -1;
            for (int j = 0; j <= TR_MAX_WHY; j++)
                if (!used[j] && why_ns[j] > 0 && (w < 0 || why_ns[j] > why_ns[w]))
                    w = j;
            if (w < 0)
                break;
            used[w] = true;
            left -= why_ns[w];
            reason_add(&r, why_ns[w], "%s", w > 0 ? st->why[w - 1] : "ops whose shapes gave no bytes");
        }
        reason_add(&r, left, "other ops");
    }
    say_why_unattributed(a, name, r.text);
    return rc;
}

/* Kernel time by class that no op took: time-only stages, each with the
 * reason it has no work (evidence "unattributed"). */
static int class_stages(analysis *a, const bool *has_flops, mb_err *err)
{
    tr_state *st = a->st;
    for (int c = 0; c < st->rules->n_classes; c++) {
        if (c == TR_CLASS_NCCL || c == TR_CLASS_MEMCPY || c == TR_CLASS_MEMSET)
            continue;
        int64_t ns = 0;
        long long count = 0;
        for (int d = 0; d < st->n_devices; d++) {
            ns += st->devices[d].step_class_ns[c];
            count += st->devices[d].step_class_count[c];
        }
        ns -= a->attr.ns[c];
        count -= a->attr.count[c];
        if (count <= 0)
            continue;
        char name[96], source[160];
        const char *comp = "other";
        const char *cname = st->rules->class_names[c];
        int fam = class_family(st->rules, c);
        if (fam != TR_OP_NONE) {
            comp = family_component(fam);
            snprintf(name, sizeof name, "%s%s", comp, has_flops[fam] ? " (unattributed)" : "");
        } else if (c == TR_CLASS_OTHER)
            snprintf(name, sizeof name, "other compute");
        else
            snprintf(name, sizeof name, "%s", cname);
        class_reason(a, c, fam != TR_OP_NONE, name);
        if (fam != TR_OP_NONE) {
            /* per step, as the stage is shown under "times are per step" (a T4 trace's 3 steps read 20.8 ms
             * here beside its 6.92-ms stage) */
            char t[32];
            size_t steps = st->n_steps;
            mb_fmt_seconds(t, sizeof t, sec(ns) / (double)(steps ? steps : 1)); /* the one time format */
            const cJSON *why = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(a->ev, "unattributed"), name);
            mb_run_warn(a->run, "%s: %s%s of %s kernels: time only, no FLOP/s (%s)", name, t, steps ? " a step" : "",
                        cname, cJSON_IsString(why) ? why->valuestring : "FLOPs unknown");
        }
        snprintf(source, sizeof source, "trace: %lld kernels of class %s (time only)", count, cname);
        mb_stage s = {.name = name, .component = (char *)comp, .work = sec(ns), .work_unit = "s",
                      .seconds = sec(ns), .count = count, .source = source};
        int rc = add_stage(a, &s, a->tablep->sp_class[c], err);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

/* The stage name of collective i: its kind, and its dtype when another
 * kind of the same name in the steps has another (an all-reduce of floats
 * and one of bf16 are two stages that must read apart: TraceLens's MI300X
 * ResNet trace had two "broadcast"). */
static void coll_stage_name(const tr_state *st, int i, char *buf, size_t len)
{
    const tr_coll_stat *c = &st->colls[i];
    bool shared = false;
    for (int j = 0; j < st->n_colls; j++)
        shared |= j != i && st->colls[j].calls > 0 && strcmp(st->colls[j].name, c->name) == 0;
    if (shared)
        snprintf(buf, len, "%s %s", c->name, c->dtype[0] ? c->dtype : "(dtype unknown)");
    else
        snprintf(buf, len, "%s", c->name);
}

static int collective_stages(analysis *a, cJSON *arr, mb_err *err)
{
    tr_state *st = a->st;
    bool ranks_unknown = false;
    for (int i = 0; i < st->n_colls; i++) {
        const tr_coll_stat *c = &st->colls[i];
        if (c->calls == 0)
            continue; /* all outside the steps (count_in_steps) */
        char stage_name[64];
        coll_stage_name(st, i, stage_name, sizeof stage_name);
        int ranks = c->ranks > 0 ? c->ranks : (int)a->world_size;
        const char *comp = mb_coll_stage_component(c->name);
        /* a kind mlbench does not measure (all-to-all, send/recv) is 'other' with role communication: read as
         * unattributed, a 2-A100 MoE trace's all-to-all was 62.9% "unattributed" and communication at once */
        const char *role = strcmp(comp, "other") == 0 ? "communication" : NULL;
        const char *dtype = c->dtype[0] ? c->dtype : NULL;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        add_str(o, "name", c->name);
        add_str(o, "dtype", dtype);
        add_num(o, "calls", (double)c->calls);
        add_num(o, "seconds", sec(c->ns));
        if (ranks > 0)
            add_num(o, "ranks", ranks);
        else {
            cJSON_AddNullToObject(o, "ranks");
            ranks_unknown = true;
        }
        char source[160];
        if (c->sized > 0) {
            add_num(o, "bytes", c->bytes);
            double secs = sec(c->sized_ns);
            add_num(o, "algbw_gbps", mb_algbw(c->bytes, secs) / 1e9);
            mb_collective kind;
            if (ranks > 0 && mb_coll_from_name(c->name, &kind))
                add_num(o, "busbw_gbps", mb_busbw(kind, c->bytes, secs, ranks) / 1e9);
            snprintf(source, sizeof source, "trace: %lld %s kernels with collective args", c->sized,
                     c->name);
            mb_stage s = {.name = stage_name, .component = (char *)comp, .role = (char *)role,
                          .dtype = (char *)dtype, .block_size = (long long)(c->bytes / (double)c->sized), .ranks = ranks,
                          .work = c->bytes, .work_unit = "byte", .seconds = secs,
                          .count = c->sized, .source = source};
            int rc = add_stage(a, &s, SP_COLL, err);
            if (rc != MB_OK)
                return rc;
        } else
            cJSON_AddNullToObject(o, "bytes");
        if (c->sized < c->calls) {
            char name[96];
            snprintf(name, sizeof name, "%s%s", stage_name, c->sized ? " (size unknown)" : "");
            snprintf(source, sizeof source, "trace: %lld %s kernels without size args (time only)",
                     c->calls - c->sized, c->name);
            double secs = sec(c->ns - c->sized_ns);
            mb_stage s = {.name = name, .component = (char *)comp, .role = (char *)role, .dtype = (char *)dtype,
                          .ranks = ranks, .work = secs, .work_unit = "s", .seconds = secs,
                          .count = c->calls - c->sized, .source = source};
            int rc = add_stage(a, &s, SP_COLL, err);
            if (rc != MB_OK)
                return rc;
        }
    }
    if (st->nccl_kernels_unsized > 0)
        partial(a,
                "%lld collective kernels carry no size args (Collective name, In msg nelems, "
                "dtype): their stages carry time only",
                st->nccl_kernels_unsized);
    if (ranks_unknown)
        partial(a, "collective rank count unknown (no Group size arg, no distributedInfo.world_size)");
    return MB_OK;
}

/* The time copies of one kind (direction, memory) run in the windows with nothing else on their device: no
 * kernel, memset or copy of another kind (a pinned 154 MB copy to an A100 and one back at once: the one to the
 * host runs wholly inside the other, and a faster one saves nothing). From the raw events (before step 4
 * merges them). -1: out of memory. */
static int64_t copy_alone_ns(const analysis *a, int dir, int mem)
{
    const tr_state *st = a->st;
    int64_t alone = 0;
    for (int d = 0; d < st->n_devices; d++) {
        const tr_device *dev = &st->devices[d];
        if (dev->step_copies[dir][mem].count == 0)
            continue;
        int64_t *own = malloc(sizeof *own * 2 * (st->n_xfers + 1));
        int64_t *rest = malloc(sizeof *rest * 2 * (st->n_xfers + dev->n_ev + 1));
        if (own == NULL || rest == NULL) {
            free(own);
            free(rest);
            return -1;
        }
        size_t n_own = 0, n_rest = 0;
        for (size_t i = 0; i < st->n_xfers; i++) {
            const tr_xfer *x = &st->xfers[i];
            if (x->kind != TR_XFER_COPY || x->device != d || !in_windows(a->win, a->n_win, x->ts))
                continue;
            int64_t *to = x->dir == dir && x->mem == mem ? &own[2 * n_own++] : &rest[2 * n_rest++];
            to[0] = x->ts;
            to[1] = x->ts + x->dur;
        }
        for (size_t i = 0; i < dev->n_ev; i++) { /* kernels and memsets: the copies came from the transfers */
            const int64_t *w = dev->ev + i * TR_EV_WORDS;
            if (ev_class(w) == TR_CLASS_MEMCPY || !in_windows(a->win, a->n_win, w[0]))
                continue;
            rest[2 * n_rest] = w[0];
            rest[2 * n_rest++ + 1] = w[0] + ev_dur(w);
        }
        n_own = mb_tr_merge_intervals(own, n_own);
        n_rest = mb_tr_merge_intervals(rest, n_rest);
        for (size_t i = 0; i < n_own; i++)
            alone += own[2 * i + 1] - own[2 * i];
        alone -= mb_tr_intersection(own, n_own, rest, n_rest);
        free(own);
        free(rest);
    }
    return alone;
}

static int copy_stages(analysis *a, mb_err *err)
{
    tr_state *st = a->st;
    long long unsized = 0;
    for (int i = 0; i < TR_N_DIRS; i++)
        for (int j = 0; j < TR_N_MEMS; j++) {
            tr_copy_stat c = {0};
            for (int d = 0; d < st->n_devices; d++) {
                const tr_copy_stat *x = &st->devices[d].step_copies[i][j];
                c.count += x->count;
                c.sized += x->sized;
                c.bytes += x->bytes;
                c.ns += x->ns;
                c.sized_ns += x->sized_ns;
            }
            if (c.count == 0)
                continue;
            unsized += c.count - c.sized;
            bool host = j == TR_MEM_PAGEABLE || j == TR_MEM_PINNED;
            char name[64], source[128];
            snprintf(name, sizeof name, "copy %s%s%s", dir_names[i], host ? " " : "",
                     host ? mem_names[j] : "");
            snprintf(source, sizeof source, "trace: %lld gpu_memcpy events", c.count);
            bool sized = c.sized == c.count;
            mb_stage s = {.name = name, .component = "copy", .has_alone = true,
                          .alone_seconds = sec(a->copy_alone[i][j]),
                          .direction = i == TR_DIR_UNKNOWN ? NULL : (char *)dir_names[i],
                          .memory = host ? (char *)mem_names[j] : NULL,
                          .block_size = sized ? (long long)(c.bytes / (double)c.count) : 0,
                          .work = sized ? c.bytes : sec(c.ns), .work_unit = sized ? "byte" : "s",
                          .seconds = sec(c.ns), .count = c.count, .source = source};
            int rc = add_stage(a, &s, SP_COPY, err);
            if (rc != MB_OK)
                return rc;
            if (!host && (i == TR_DIR_H2D || i == TR_DIR_D2H))
                mb_run_warn(a->run, "%s: host memory kind (pageable/pinned) not in the event name",
                            name);
        }
    tr_copy_stat ms = {0};
    for (int d = 0; d < st->n_devices; d++) {
        const tr_copy_stat *x = &st->devices[d].step_memset;
        ms.count += x->count;
        ms.sized += x->sized;
        ms.bytes += x->bytes;
        ms.ns += x->ns;
    }
    if (ms.count > 0) {
        char source[128];
        snprintf(source, sizeof source, "trace: %lld gpu_memset events", ms.count);
        bool sized = ms.sized == ms.count;
        mb_stage s = {.name = "memset", .component = "membw", .op = "write",
                      .block_size = sized ? (long long)(ms.bytes / (double)ms.count) : 0,
                      .work = sized ? ms.bytes : sec(ms.ns), .work_unit = sized ? "byte" : "s",
                      .seconds = sec(ms.ns), .count = ms.count, .source = source};
        int rc = add_stage(a, &s, a->tablep->sp_class[TR_CLASS_MEMSET], err);
        if (rc != MB_OK)
            return rc;
    }
    if (unsized > 0)
        partial(a,
                "%lld gpu_memcpy events carry no byte count (ROCm traces do not record it): copy "
                "stages carry time only",
                unsized);
    return MB_OK;
}

/* Allocation and set-up calls (cudaMalloc, cudaFree, stream creation,
 * module loading: a launch call of 10 ms or more, a first call creating the
 * context): a trace of the first iterations pays them once, and they are no
 * launch's cost. Counted in the launch stage, particle_transformer's A100
 * trace (one 1337-ms cudaLaunchKernel of 549) read "Host-overhead (launch)
 * bound, 94.9%", 2.45 ms a launch. Their own stage, no ceiling; the
 * diagnosis says whether they come once or every step. */
static int setup_stage(analysis *a, mb_err *err)
{
    const host_calls *c = &a->calls;
    int64_t startup = a->tablep->startup_ns;
    if ((c->setup == 0 && startup == 0) || a->st->n_devices == 0)
        return MB_OK;
    char source[200], why[600], most[32] = "", all[32] = "";
    /* the call that took most of it, in the whole trace (host.setup), when it took half or more */
    const tr_named_stat *largest = NULL;
    for (int i = 0; i < a->st->setup.n; i++)
        if (largest == NULL || a->st->setup.s[i].ns > largest->ns)
            largest = &a->st->setup.s[i];
    if (largest && largest->ns * 2 < a->st->setup.ns)
        largest = NULL;
    if (largest) {
        mb_fmt_seconds(most, sizeof most, sec(largest->ns));
        mb_fmt_seconds(all, sizeof all, sec(a->st->setup.ns));
    }
    snprintf(source, sizeof source, "trace: %lld allocation and set-up call%s%s (host time; by name: host.setup)",
             c->setup, c->setup == 1 ? "" : "s", a->st->n_steps ? " in the steps" : "");
    if (startup > 0) {
        char t[32];
        size_t at = strlen(source);
        mb_fmt_seconds(t, sizeof t, sec(startup));
        snprintf(source + at, sizeof source - at, "; the GPU starting its first kernel %s after its launch", t);
    }
    if (a->st->n_steps > 0 && c->setup_steps * 2 > (long long)a->st->n_steps)
        snprintf(why, sizeof why, "host time in allocation and set-up calls in %lld of %zu steps: the caching "
                 "allocator giving memory back and taking it again (torch.cuda.empty_cache, fragmentation); no "
                 "benchmark measures it: time only", c->setup_steps, a->st->n_steps);
    else if (largest && strstr(largest->name, "Activity Buffer") && largest->ns * 2 >= a->st->setup.ns)
        /* an RTX 5060 Laptop's one forward: its 2.72 ms of set-up one CUPTI buffer request, described as context
         * creation and module loading "which a run's first iterations pay" */
        snprintf(why, sizeof why, "mostly the profiler's own buffers (%s: %s of the %s of such calls in the trace): "
                 "a cost of profiling, "
                 "which the loop without the profiler does not pay; no benchmark measures it: time only",
                 largest->name, most, all);
    else
        snprintf(why, sizeof why, "a one-time cost (context creation, module loading on a kernel's first launch, "
                 "a library's first call, the caching allocator's first cudaMalloc, torch.compile or TorchScript "
                 "compiling%s), which a run's first iterations pay%s%s%s%s%s%s%s%s; no benchmark measures it: time "
                 "only",
                 a->st->overhead_records ? ", the profiler's own buffers" : "",
                 a->st->n_steps ? "" : " (no steps marked)", largest ? "; here mostly " : "",
                 largest ? largest->name : "", largest ? ": " : "", largest ? most : "", largest ? " of the " : "",
                 largest ? all : "", largest ? " of such calls in the trace" : "");
    say_why_unattributed(a, MB_SETUP_STAGE, why);
    mb_stage s = {.name = MB_SETUP_STAGE, .component = "other", .device = "cpu", .role = "overhead",
                  .work = sec(c->setup_ns + startup), .work_unit = "s", .seconds = sec(c->setup_ns + startup),
                  .count = c->setup, .source = source};
    return add_stage(a, &s, SP_SETUP, err);
}

static int host_stages(analysis *a, mb_err *err)
{
    const host_calls *c = &a->calls;
    const char *where = a->st->n_steps ? " in the steps" : "";
    char source[160];
    int rc = MB_OK;
    /* no GPU activity: a CPU run's runtime calls (the profiler's closing cudaDeviceSynchronize) are host time,
     * in its step table's host part (trace_cpu.c); a stage of their own counted them twice (100.0009%) */
    bool gpu = a->st->n_devices > 0;
    if (c->launches > 0 && gpu) {
        /* A CUDA graph's replay is one call that launches every kernel of
         * the graph: held against the one-kernel launch ceiling per kernel. */
        long long replays = c->replays, launches = c->launches;
        if (replays > 0 && a->attr.graph_kernels > 0) {
            launches += a->attr.graph_kernels - replays;
            snprintf(source, sizeof source, "trace: %lld launch calls%s (host time), %lld of them CUDA graph "
                     "replays that launched %lld kernels", c->launches, where, replays, a->attr.graph_kernels);
        } else
            snprintf(source, sizeof source, "trace: %lld launch calls%s (host time)", c->launches, where);
        /* a launch call of 10 ms or more is set-up (setup_stage), not a launch's cost */
        if (c->long_launches > 0) {
            size_t at = strlen(source);
            snprintf(source + at, sizeof source - at, "; %lld in set-up (10 ms or more, or a kernel's first of "
                     "100 us or more)", c->long_launches);
        }
        mb_stage s = {.name = "launch", .component = "launch", .work = (double)(launches - c->long_launches),
                      .work_unit = "launch", .seconds = sec(c->launch_ns - c->long_launch_ns),
                      .count = c->launches - c->long_launches, .source = source};
        if (s.work > 0)
            rc = add_stage(a, &s, SP_LAUNCH, err);
    }
    if (rc == MB_OK)
        rc = setup_stage(a, err);
    /* the closing synchronize (the profiler's, or the loop's after its last
     * step) waits for the queued steps: it is no step's sync. A blocking
     * copy (cudaMemcpy, hipMemcpyWithStream: .cpu(), .item()) waits as a
     * sync does, and the step table's sync part holds both: without it in
     * the stage, SGLang's decode trace (a 463 ms hipMemcpyWithStream) read
     * "Synchronization bound, 97.7%; its largest stage: host code". */
    long long waits = c->syncs + c->blocking;
    if (rc == MB_OK && waits > 0 && gpu) {
        char copies[64] = "";
        if (c->blocking)
            snprintf(copies, sizeof copies, " and %lld blocking cop%s", c->blocking, c->blocking == 1 ? "y" : "ies");
        snprintf(source, sizeof source, "trace: %lld sync call%s%s%s (host time)%s", c->syncs,
                 c->syncs == 1 ? "" : "s", copies, where,
                 a->closing_syncs ? (a->st->n_steps ? "; the closing synchronize after the last step left out"
                                                  : "; the closing synchronize after the last launch left out")
                                  : "");
        mb_stage s = {.name = "sync", .component = "sync", .work = (double)waits, .work_unit = "sync",
                      .seconds = sec(c->sync_ns + c->blocking_ns), .count = waits, .source = source};
        rc = add_stage(a, &s, SP_SYNC, err);
    }
    if (rc == MB_OK && c->data > 0) {
        snprintf(source, sizeof source, "trace: %lld enumerate(DataLoader) annotations%s; component disk is a guess",
                 c->data, where);
        mb_stage s = {.name = "dataloading", .component = "disk", .device = "cpu", .role = "data",
                      .work = sec(c->data_ns), .work_unit = "s", .seconds = sec(c->data_ns), .count = c->data,
                      .source = source};
        rc = add_stage(a, &s, SP_DATA, err);
        mb_run_warn(a->run, "dataloading: the trace does not say what the DataLoader waits on; "
                            "component 'disk' is a guess (it may be decoding or augmentation)");
    }
    return rc;
}

/* The GPU idle with its next kernel already launched: the GPU's own gaps
 * between queued kernels, not the host's time (a loop that keeps its GPU's
 * queue full read 3.5% "host code" from them: 3999 gaps of 1.5 us in five
 * steps of a GPT, bench/data's nosync H200 trace). */
static int kernel_wait_stage(analysis *a, mb_err *err)
{
    const step_table *t = a->tablep;
    if (t->ns[SP_QUEUED] <= 0 || t->queued_gaps <= 0)
        return MB_OK;
    char source[160], why[400], each[32];
    snprintf(source, sizeof source, "trace: %lld gap%s between kernels%s whose next kernel's launch call had returned",
             t->queued_gaps, t->queued_gaps == 1 ? "" : "s", a->st->n_steps ? " in the steps" : "");
    mb_fmt_seconds(each, sizeof each, sec(t->ns[SP_QUEUED]) / (double)t->queued_gaps);
    snprintf(why, sizeof why,
             "the GPU's own time between kernels it already had queued (%lld gap%s, %s each on average; HTA's kernel "
             "wait), not host code: fewer, larger kernels (fusion, torch.compile) or CUDA Graphs shorten it; no "
             "benchmark measures it: time only",
             t->queued_gaps, t->queued_gaps == 1 ? "" : "s", each);
    say_why_unattributed(a, MB_KERNEL_WAIT_STAGE, why);
    mb_stage s = {.name = MB_KERNEL_WAIT_STAGE, .component = "other", .device = "gpu", .role = "overhead",
                  .work = sec(t->ns[SP_QUEUED]), .work_unit = "s", .seconds = sec(t->ns[SP_QUEUED]),
                  .count = t->queued_gaps, .source = source};
    return add_stage(a, &s, SP_QUEUED, err);
}

/* The GPU idle time no other stage explains (the host in its own code or a
 * collective): with it, the exposed stage times add up to the steps. */
static int idle_stages(analysis *a, mb_err *err)
{
    const step_table *t = a->tablep;
    if (t->device >= 0 && t->windows > 0) {
        int rc = kernel_wait_stage(a, err);
        if (rc != MB_OK)
            return rc;
    }
    /* The host inside a collective call (c10d::alltoall_, record_param_comms) with the GPU idle: the step
     * table's "in a collective (host)", communication in the diagnosis; in the host code stage it read as
     * host code there (a 2-A100 MoE trace: 968 us) */
    if (t->windows > 0 && t->device >= 0 && t->ns[SP_HCOLL] > 0) {
        char src[160];
        snprintf(src, sizeof src, "trace: GPU idle while the host is in a collective call (%lld call%s%s)",
                 a->calls.coll, a->calls.coll == 1 ? "" : "s", a->st->n_steps ? " in the steps" : "");
        say_why_unattributed(a, MB_HOST_COLL_STAGE,
                             "the host inside a collective call (c10d, record_param_comms) while the GPU idles: "
                             "the call's own work, or waiting for the other ranks; no benchmark measures it: time "
                             "only");
        mb_stage s = {.name = MB_HOST_COLL_STAGE, .component = "other", .device = "cpu", .role = "communication",
                      .work = sec(t->ns[SP_HCOLL]), .work_unit = "s", .seconds = sec(t->ns[SP_HCOLL]),
                      .count = a->calls.coll, .source = src};
        int rc = add_stage(a, &s, SP_HCOLL, err);
        if (rc != MB_OK)
            return rc;
    }
    int64_t idle = t->ns[SP_HOST] + expose_stages(a);
    if (t->windows == 0 || idle <= 0 || t->device < 0)
        return MB_OK;
    char source[160];
    if (a->st->n_steps > 0)
        snprintf(source, sizeof source,
                 "trace: GPU idle within %zu %s outside launch, sync and DataLoader calls",
                 a->st->n_steps, mb_tr_windows_said(a->st));
    else
        snprintf(source, sizeof source,
                 "trace: GPU idle within the trace outside launch, sync and DataLoader calls");
    mb_stage s = {.name = MB_HOST_CODE_STAGE, .component = "other", .device = "cpu", .work = sec(idle),
                  .work_unit = "s", .seconds = sec(idle), .source = source};
    return add_stage(a, &s, -1, err);
}

/* ---- assembling ------------------------------------------------------------------ */

enum { UNEQUAL_STEPS = 2 }; /* the longest step over the median beyond which the steps are unequal */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void header_evidence(analysis *a)
{
    tr_state *st = a->st;
    cJSON *t = add_obj(a->ev, "trace");
    add_num(t, "json_bytes", st->json_bytes);
    add_num(t, "events", (double)st->events);
    add_num(t, "complete_events", (double)st->complete_events);
    add_num(t, "skipped_events", (double)st->skipped_events);
    add_num(t, "span_s", st->complete_events ? sec(st->span_end - st->span_start) : 0);
    if (st->have_base_time)
        add_num(t, "base_time_ns", (double)st->base_time_ns);
    if (st->have_schema)
        add_num(t, "schema_version", (double)st->schema_version);
    if (st->record_shapes >= 0)
        cJSON_AddBoolToObject(t, "record_shapes", st->record_shapes);
    add_str(t, "form", st->array_form ? "array" : "object");
    cJSON_AddBoolToObject(t, "shapes_recorded", !no_shapes_at_all(st)); /* some op has its Input Dims */
    /* the GPU's maker where deviceProperties does not name the GPU (ROCm traces often lack it) */
    if (st->runtime_calls > 0)
        add_str(t, "runtime_api", st->hip_calls * 2 > st->runtime_calls ? "hip" : "cuda");
    /* what the loop is: remedies that assume an optimizer or a model not yet compiled are said only so */
    add_num(t, "optimizer_steps", (double)st->optimizer_annotations);
    /* no backward op says inference only where the trace holds the model's ops (HTA's cpu_only fixture: ten
     * gloo all-reduces and nothing else) */
    add_num(t, "backward_ops", st->backward_ops == 0 && st->n_flop_ops == 0 ? -1 : (double)st->backward_ops);
    add_num(t, "compiled_regions", (double)st->compiled_regions);
    add_num(t, "fused_optimizer", (double)st->fused_optimizer);
    add_num(t, "foreach_optimizer", (double)st->foreach_optimizer);
    add_num(t, "graph_replays", (double)st->n_graph_corrs); /* cudaGraphLaunch calls in the trace */
    /* the math the GEMM and convolution kernels' names say: a run in bf16 or fp8 already is not told to lower
     * its precision (DeepSeek's fp8 DualPipe step on an H800 was told "bf16" and "fp8") */
    static const char *const maths[8] = { "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64", "unnamed" };
    cJSON *mm = add_obj(t, "matmul_math_seconds");
    for (int i = 0; i < 8; i++)
        add_num(mm, maths[i], sec(st->matmul_math_ns[i]));
    if (st->device_props) {
        cJSON_AddItemToObject(a->ev, "device_properties", st->device_props);
        st->device_props = NULL;
    } else
        cJSON_AddNullToObject(a->ev, "device_properties");
    cJSON *dist = st->dist_info;
    cJSON *ws = dist ? cJSON_GetObjectItemCaseSensitive(dist, "world_size") : NULL;
    a->world_size = cJSON_IsNumber(ws) ? ws->valuedouble : 0;
    if (dist) {
        cJSON_AddItemToObject(a->ev, "distributed", dist);
        st->dist_info = NULL;
    } else
        cJSON_AddNullToObject(a->ev, "distributed");
    if (a->world_size > 0)
        add_num(a->ev, "world_size", a->world_size);
    else
        cJSON_AddNullToObject(a->ev, "world_size");
}

/* Steps cut at the optimizer's (steps_from_optimizer): how, and what they
 * leave out. A loop that fetches other than one batch per optimizer step (a
 * GAN's two optimizers, gradient accumulation) is told its step is one
 * optimizer step. */
static void optimizer_steps_said(analysis *a)
{
    const tr_state *st = a->st;
    char before[32], after[32], batches[320] = "";
    mb_fmt_seconds(before, sizeof before, sec(st->before_first_step_ns));
    mb_fmt_seconds(after, sizeof after, sec(st->after_last_step_ns));
    /* a step holds one DataLoader fetch, the first step's fetch is in the step */
    if (st->dataloader_count > 0 && llabs(st->dataloader_count - (long long)st->n_steps - 1) > 1)
        snprintf(batches, sizeof batches, " (%lld DataLoader batches for %zu optimizer steps: a step here is one "
                 "optimizer step, not one batch)", st->dataloader_count, st->n_steps + 1);
    else if (st->opt_steps_per_ann >= 2) /* the user's iteration annotation holds several (a GAN's two) */
        snprintf(batches, sizeof batches, " (each of the %lld '%.60s' annotations, once an iteration by their "
                 "period, holds %lld or more optimizer steps: if it marks the loop's iteration, as a GAN's two "
                 "optimizers do, a step here is part of one)", st->opt_ann_count, st->opt_ann_name,
                 st->opt_steps_per_ann);
    partial(a, "no ProfilerStep#N annotations: the steps are cut at the host's %zu Optimizer.step annotations, "
               "each from the end of one optimizer step to the end of the next%s; the %s before the first (set-up: "
               "%s) and the %s after the last are left out; torch.profiler.schedule with prof.step() every "
               "iteration marks the loop's own steps",
            st->n_steps + 1, batches, before,
            st->n_devices > 0 ? "the CUDA context, each kernel's first launch, the first batch"
                              : "what ran before the loop, its first batch",
            after);
}

/* Steps cut at the user's annotation (steps_from_annotation): how, and
 * what they leave out. */
static void annotation_steps_said(analysis *a)
{
    const tr_state *st = a->st;
    char before[32], after[32];
    mb_fmt_seconds(before, sizeof before, sec(st->before_first_step_ns));
    mb_fmt_seconds(after, sizeof after, sec(st->after_last_step_ns));
    partial(a, "no ProfilerStep#N or Optimizer.step annotations: the steps are cut at the %zu '%s' annotations, "
               "each from the start of one to the start of the next (an iteration with what runs between them); "
               "the %s before the first and the %s from the last one's start on are left out; "
               "torch.profiler.schedule with prof.step() every iteration marks the loop's own steps",
            st->n_steps + 1, st->step_annotation, before, after);
}

/* Steps cut at empty ProfilerStep markers (steps_from_markers). */
static void marker_steps_said(analysis *a)
{
    const tr_state *st = a->st;
    char after[32];
    mb_fmt_seconds(after, sizeof after, sec(st->after_last_step_ns));
    partial(a, "the %zu ProfilerStep#N events hold no op, call or kernel and are far shorter than the time "
               "between them (markers, as the legacy profiler exports them): each step runs from one to the next; "
               "the %s from the last one on are left out",
            st->n_steps + 1, after);
}

/* One ProfilerStep#N recorded by several processes: a file that merges the
 * ranks' traces (HTA's or TraceLens's merge of an AMD 4-rank DDP run read
 * "12 steps"). The steps, the host's calls and the GPUs' idle time mix the
 * processes; said, with what to give instead. */
static void merged_processes_warning(analysis *a)
{
    const tr_state *st = a->st;
    size_t pids = 0;
    int64_t seen[16];
    bool repeated = false;
    for (size_t k = 0; k < st->n_steps; k++) {
        size_t j = 0;
        while (j < pids && seen[j] != st->steps[k].pid)
            j++;
        if (j == pids && pids < sizeof seen / sizeof *seen)
            seen[pids++] = st->steps[k].pid;
        for (size_t i = 0; i < k && !repeated; i++)
            repeated = st->steps[i].number >= 0 && st->steps[i].number == st->steps[k].number &&
                       st->steps[i].pid != st->steps[k].pid;
    }
    if (repeated && pids > 1)
        partial(a, "the same ProfilerStep#N was recorded by %s%zu processes: the file merges several ranks' traces; "
                   "its %zu steps, the host's calls and the GPUs' idle time mix them: give one rank's own trace "
                   "(torch.profiler writes one per process)",
                pids == sizeof seen / sizeof *seen ? "at least " : "", pids, st->n_steps);
}

/* Copies of two kinds (direction, memory) in flight at once on one GPU, on
 * streams of their own: the step table's copy part is their union, which
 * their stages share in proportion to their time, so neither stage's
 * Amdahl line holds alone (a pinned 154 MB copy to the GPU and one back at
 * once on an A100: "copy d2h at its ceiling: 1.44x" for a copy wholly
 * inside the other). Said when the overlap is 5% of the copies' time or
 * more. False: out of memory. */
static bool concurrent_copies(analysis *a)
{
    tr_state *st = a->st;
    enum { KINDS = TR_N_DIRS * TR_N_MEMS };
    for (int d = 0; d < st->n_devices; d++) {
        int64_t *iv = malloc((2 * st->n_xfers + 2) * sizeof *iv);
        if (iv == NULL)
            return false;
        int64_t own[KINDS] = { 0 }, sum = 0;
        size_t n_all = 0;
        for (int k = 0; k < KINDS; k++) { /* each kind's union, then all of them */
            size_t n = 0;
            for (size_t i = 0; i < st->n_xfers; i++) {
                const tr_xfer *x = &st->xfers[i];
                if (x->kind != TR_XFER_COPY || x->device != d || x->dir * TR_N_MEMS + x->mem != k ||
                    !in_windows(a->win, a->n_win, x->ts))
                    continue;
                iv[2 * n] = x->ts;
                iv[2 * n + 1] = x->ts + x->dur;
                n++;
            }
            n = mb_tr_merge_intervals(iv, n);
            for (size_t i = 0; i < n; i++)
                own[k] += iv[2 * i + 1] - iv[2 * i];
            sum += own[k];
        }
        for (size_t i = 0; i < st->n_xfers; i++) {
            const tr_xfer *x = &st->xfers[i];
            if (x->kind == TR_XFER_COPY && x->device == d && in_windows(a->win, a->n_win, x->ts)) {
                iv[2 * n_all] = x->ts;
                iv[2 * n_all + 1] = x->ts + x->dur;
                n_all++;
            }
        }
        n_all = mb_tr_merge_intervals(iv, n_all);
        int64_t all = 0;
        for (size_t i = 0; i < n_all; i++)
            all += iv[2 * i + 1] - iv[2 * i];
        free(iv);
        if (all <= 0 || (sum - all) * 20 < all)
            continue;
        int first = -1, second = -1; /* the two kinds with the most time */
        for (int k = 0; k < KINDS; k++)
            if (own[k] > 0 && (first < 0 || own[k] > own[first])) {
                second = first;
                first = k;
            } else if (own[k] > 0 && (second < 0 || own[k] > own[second]))
                second = k;
        if (second < 0)
            continue;
        /* windows without steps: the one window of a run whose pre-window work was cut (count_in_steps) */
        double per = st->n_steps > 0 ? (double)st->n_steps : 1;
        char both[32], longest[32];
        mb_fmt_seconds(both, sizeof both, (double)(sum - all) / 1e9 / per);
        mb_fmt_seconds(longest, sizeof longest, (double)own[first] / 1e9 / per);
        partial(a, "copies of two kinds ran at once on GPU %lld (copy %s %s and copy %s %s, on streams of their own): "
                   "%s a %s with both in flight; their stages share the copy time in proportion, and the Amdahl line "
                   "of each counts only its time alone on the GPU: the copies take at least the longest kind's %s",
                (long long)st->devices[d].id, dir_names[first / TR_N_MEMS], mem_names[first % TR_N_MEMS],
                dir_names[second / TR_N_MEMS], mem_names[second % TR_N_MEMS], both,
                st->n_steps > 0 ? "step" : "run", longest);
    }
    return true;
}

/* Kernel launches whose kernels the trace lacks: no GPU event carries their correlation id. A few at the end ran
 * after the profiler stopped; many mean CUPTI dropped records (its activity buffers full) and every GPU figure reads
 * from the rest. TriForce's Llama-2-7B trace (an L40, 10 GPUs listed): 923 of its 1556 launches without a kernel,
 * read "GPU compute bound 85.7%" with no word of it. Said from 10% of 20 or more launches, in a trace without a graph
 * capture. false: out of memory. */
static bool unrecorded_kernels(analysis *a)
{
    tr_state *st = a->st;
    size_t n = 0, missing = 0, launches = 0;
    for (int d = 0; d < st->n_devices; d++)
        n += st->devices[d].n_ev;
    /* a graph capture's launches record the graph and run nothing (vLLM's and SGLang's capture traces: 98% and
     * more of their launches): no count to go by */
    if (n == 0 || st->n_launches < 20 || st->captures > 0)
        return true;
    int64_t *corrs = malloc(sizeof *corrs * n);
    if (corrs == NULL)
        return false;
    n = 0;
    for (int d = 0; d < st->n_devices; d++)
        for (size_t i = 0; i < st->devices[d].n_ev; i++)
            corrs[n++] = st->devices[d].ev[i * TR_EV_WORDS + 2];
    qsort(corrs, n, sizeof *corrs, cmp_i64);
    int64_t last_missing = INT64_MIN;
    for (size_t i = 0; i < st->n_launches; i++) {
        if (st->launches[i].corr < 0)
            continue;
        launches++;
        if (bsearch(&st->launches[i].corr, corrs, n, sizeof *corrs, cmp_i64) == NULL) {
            missing++;
            last_missing = imax(last_missing, st->launches[i].ts);
        }
    }
    free(corrs);
    /* a synchronize after the last of them returned inside the trace: they ran in it, their records were lost
     * (TriForce's trace: a cudaDeviceSynchronize after its 923 returns within it) */
    bool ran = false;
    for (size_t i = 0; i < st->sync_calls.n && !ran; i++)
        ran = st->sync_calls.iv[2 * i] > last_missing;
    add_num(cJSON_GetObjectItemCaseSensitive(a->ev, "trace"), "launches_without_kernel", (double)missing);
    if (launches >= 20 && missing * 10 >= launches) {
        char p[16];
        snprintf(p, sizeof p, "%.0f%%", 100.0 * (double)missing / (double)launches);
        partial(a, "%zu of the trace's %zu kernel launches (%s) have no GPU event: %s; the GPU's busy time, the "
                   "stages and the bottleneck read from the kernels it holds",
                missing, launches, p,
                ran ? "a synchronize after them returned within the trace, so they ran in it and their records were "
                      "lost (CUPTI dropped them, its activity buffers full)"
                    : "their kernels were not recorded (CUPTI dropped records, its activity buffers full) or ran "
                      "after the trace ended");
    }
    return true;
}

static void partial_reasons(analysis *a)
{
    tr_state *st = a->st;
    int listed = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a->ev, "device_properties"));
    if (listed > 0 && mb_tr_ran_on_cpu(st) && st->cpu_only_ops > 0)
        partial(a, "no GPU events (kernel, gpu_memcpy, gpu_memset) though deviceProperties lists %d GPU%s: %lld ops "
                   "only a CPU runs (oneDNN's) and no kernel launch or copy say the ops ran on the CPU; they are held "
                   "against its ceilings",
                listed, listed == 1 ? "" : "s", st->cpu_only_ops);
    else if (listed > 0 && mb_tr_ran_on_cpu(st))
        partial(a, "no GPU events (kernel, gpu_memcpy, gpu_memset) though deviceProperties lists %d GPU%s: %lld CUDA "
                   "runtime call%s but no kernel launch or copy say the ops ran on the CPU; they are held against "
                   "its ceilings",
                listed, listed == 1 ? "" : "s", st->runtime_calls, st->runtime_calls == 1 ? "" : "s");
    else if (st->n_devices == 0 && listed > 0)
        partial(a, "no GPU events (kernel, gpu_memcpy, gpu_memset) though deviceProperties lists %d GPU%s: GPU "
                   "activity was not recorded (ProfilerActivity.CUDA); the ops' times are the host's, and no op is "
                   "held against a CPU ceiling",
                listed, listed == 1 ? "" : "s");
    else if (st->n_devices == 0 && st->gpu_labels > 0 && !mb_tr_ran_on_cpu(st))
        partial(a, "no GPU events (kernel, gpu_memcpy, gpu_memset) though the trace labels %lld GPU lane%s (\"GPU 0\", "
                   "Kineto's process_labels): GPU activity was not recorded (ProfilerActivity.CUDA, or use_cuda=True in "
                   "the older torch.autograd.profiler); the ops' times are the host's, and no op is held against a CPU "
                   "ceiling",
                st->gpu_labels, st->gpu_labels == 1 ? "" : "s");
    else if (st->n_devices == 0 && st->gpu_only_ops > 0)
        partial(a, "no GPU events (kernel, gpu_memcpy, gpu_memset) though %lld ops only a GPU runs (%s) did: GPU "
                   "activity was not recorded (ProfilerActivity.CUDA, or use_cuda=True in the older "
                   "torch.autograd.profiler); the ops' times are the host's, and no op is held against a CPU ceiling",
                st->gpu_only_ops, st->gpu_only_op);
    else if (st->n_devices == 0)
        partial(a, "no GPU events (kernel, gpu_memcpy, gpu_memset): a CPU-only trace or GPU "
                   "activity was not recorded; GPU busy/idle, kernel classes and GPU stages are "
                   "unavailable");
    /* SE-ViT's A4000 trace (2022 schema: GPU activity and runtime calls, no
     * op): its host code is the GPU's idle time between runtime calls, and
     * no kernel has an op to give it FLOPs or bytes */
    if (st->n_devices > 0 && st->cpu_op_events == 0)
        partial(a, "the trace records no CPU ops (ProfilerActivity.CPU was off): no kernel is tied to an op, so "
                   "no FLOPs or bytes, and the host's time outside runtime calls is host code without its ops; "
                   "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True");
    merged_processes_warning(a);
    if (!st->have_device_props)
        partial(a, "no deviceProperties: GPU names and sizes unknown");
    else if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a->ev, "device_properties")) == 0)
        partial(a, "deviceProperties is empty: GPU names and sizes unknown");
    if (!st->have_dist_info)
        partial(a, "no distributedInfo: world size and rank unknown");
    if (st->steps_from_markers)
        marker_steps_said(a);
    if (st->steps_from_optimizer)
        optimizer_steps_said(a);
    else if (st->steps_from_annotation)
        annotation_steps_said(a);
    else if (st->n_steps == 0)
        partial(a, "no ProfilerStep#N annotations: no per-step figures or step time (profile "
                   "with torch.profiler.schedule and call prof.step() every iteration)");
    long long noshape = st->ops_without_shapes[TR_OP_GEMM] + st->ops_without_shapes[TR_OP_CONV];
    size_t shaped[TR_N_OP_KINDS] = {0};
    for (size_t i = 0; i < st->n_flop_ops; i++) /* counts from their own shapes */
        if (st->flop_ops[i].flops >= 0 && !(st->flop_ops[i].flags & TR_OPF_LINKED))
            shaped[st->flop_ops[i].kind]++;
    if (noshape > 0 && shaped[TR_OP_GEMM] + shaped[TR_OP_CONV] == 0 && st->array_form)
        partial(a, "matmul/conv shapes not recorded: the JSON array torch.autograd.profiler writes without Kineto "
                   "holds none, even with record_shapes=True: gemm/conv stages carry time only; torch.profiler "
                   "with record_shapes=True (where Kineto is built in) or python3 -m mlbench.simplify (counts the "
                   "step's FLOPs) gives FLOP/s");
    else if (noshape > 0 && shaped[TR_OP_GEMM] + shaped[TR_OP_CONV] == 0)
        partial(a, "matmul/conv shapes not recorded (%s): gemm/conv stages carry time only, no "
                   "FLOP/s",
                st->shape_why[TR_OP_GEMM][0] ? st->shape_why[TR_OP_GEMM] : st->shape_why[TR_OP_CONV]);
    if (st->ops_without_shapes[TR_OP_MEM] > 0 && shaped[TR_OP_MEM] == 0 && st->n_devices > 0)
        partial(a, "memory-bound op shapes not recorded (%s): memory-bound kernels carry time only, no "
                   "bytes/s",
                st->shape_why[TR_OP_MEM]); /* a CPU-only run has no memory-bound kernels to speak of */
    if (st->gpu_events_without_device > 0)
        partial(a, "%lld GPU events name no device: counted as device -1",
                st->gpu_events_without_device);
    if (st->skipped_events > 0)
        partial(a, "%lld complete events without a usable ts/dur were ignored", st->skipped_events);
}

static void host_evidence(analysis *a)
{
    tr_state *st = a->st;
    cJSON *host = add_obj(a->ev, "host");
    cJSON *launch = count_seconds(host, "launch", st->launch.count, st->launch.ns);
    /* in set-up: TR_LONG_LAUNCH_NS or more, or a kernel's first of TR_FIRST_LAUNCH_NS or more */
    count_seconds(launch, "long", st->long_launches, st->long_launch_ns);
    named_table(host, "setup", &st->setup);
    if (a->tablep->startup_ns > 0) /* in the set-up part: the GPU starting up (gpu_startup) */
        add_num(cJSON_GetObjectItemCaseSensitive(host, "setup"), "gpu_startup_s", sec(a->tablep->startup_ns));
    if (st->n_steps > 0) /* whether set-up comes once or every step */
        add_num(cJSON_GetObjectItemCaseSensitive(host, "setup"), "steps_with", (double)a->calls.setup_steps);
    named_table(host, "sync", &st->sync);
    named_table(host, "blocking_copy", &st->blocking);
    cJSON *dl = count_seconds(host, "dataloader", st->dataloader_count, st->dataloader_ns);
    add_num(dl, "in_process", (double)st->dataloader_in_process);
    add_num(host, "ops", (double)st->cpu_op_events);
    /* what the steps' windows hold (the whole trace without steps): per-step figures come from these, not from
     * the trace's set-up before the first step and its tail after the last (an RTX 4090 laptop's 41.9 ms of
     * set-up read "host time in kernel launch calls: 9.6% of the step" for 8.3%, "218 ops per step" for 203) */
    cJSON *in = add_obj(host, "in_steps");
    add_num(in, "ops", (double)a->calls.ops);
    add_num(in, "longest_wait_seconds", sec(a->calls.longest_wait_ns));
    cJSON *l = count_seconds(in, "launch", a->calls.launches, a->calls.launch_ns);
    count_seconds(l, "long", a->calls.long_launches, a->calls.long_launch_ns);
    count_seconds(in, "blocking_copy", a->calls.blocking, a->calls.blocking_ns);
    if (st->n_dispatch_durs > 0) { /* the median op that does nothing: what dispatching one costs here */
        double med = mb_tr_median_i64(st->dispatch_durs, st->n_dispatch_durs);
        cJSON *m = add_obj(host, "metadata_ops");
        add_num(m, "count", (double)st->n_dispatch_durs);
        add_num(m, "median_seconds", med / 1e9);
    }
    cJSON *cs = add_obj(host, "cuda_sync_events");
    for (int i = 0; i < st->cuda_sync_events.n; i++)
        add_num(cs, st->cuda_sync_events.s[i].name, (double)st->cuda_sync_events.s[i].count);
}

/* Steps whose times differ by more than twice the median (an evaluation in
 * every third step: 354, 9.0, 7.6, 138 and 15.9 ms, a mean of 105 ms where
 * the training step is 16 at most) make every per-step figure a mean over
 * unlike steps: said, with the steps in order. `sorted` holds them sorted. */
static void unequal_steps(analysis *a, const double *sorted, size_t n, double median)
{
    const tr_state *st = a->st;
    if (n < 3 || !(median > 0) || sorted[n - 1] <= UNEQUAL_STEPS * median)
        return;
    char list[400];
    size_t at = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += sec(st->steps[i].end - st->steps[i].start);
    for (size_t i = 0; i < n && i < 12 && at < sizeof list - 40; i++) {
        char t[24];
        mb_fmt_seconds(t, sizeof t, sec(st->steps[i].end - st->steps[i].start));
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", t);
    }
    if (n > 12)
        snprintf(list + at, sizeof list - at, ", ... (%zu in all)", n);
    char med[24], mean[24];
    mb_fmt_seconds(med, sizeof med, median);
    mb_fmt_seconds(mean, sizeof mean, sum / (double)n);
    mb_run_warn(a->run, "the steps are unequal: %s (the longest %.1fx the median, %s; their mean %s): every per-step "
                        "figure is a mean over them; a step that holds other work (an evaluation, a checkpoint, "
                        "logging, a first step's set-up), waits longer, or ran while the machine was busier weighs in it: "
                        "profile like steps apart",
                list, sorted[n - 1] / median, med, mean);
}

static int run_figures(analysis *a)
{
    tr_state *st = a->st;
    mb_run *run = a->run;
    run->total_seconds = st->complete_events ? sec(st->span_end - st->span_start) : 0;
    run->steps = (int)st->n_steps;
    if (st->n_steps > 0) {
        double *d = malloc(sizeof *d * st->n_steps);
        if (d == NULL)
            return MB_ESYS;
        for (size_t i = 0; i < st->n_steps; i++)
            d[i] = sec(st->steps[i].end - st->steps[i].start);
        qsort(d, st->n_steps, sizeof *d, cmp_double);
        run->step_seconds = mb_median(d, (int)st->n_steps);
        unequal_steps(a, d, st->n_steps, run->step_seconds);
        free(d);
        add_num(a->ev, "step_seconds_median", run->step_seconds);
    } else
        cJSON_AddNullToObject(a->ev, "step_seconds_median");
    /* One definition (docs/traces.md): the main device's busy time (union
     * over its streams) within the step windows / their wall time; without
     * ProfilerSteps, within the trace's span. No GPU events: unknown. */
    const step_table *t = a->tablep;
    if (t->device >= 0 && t->wall > 0) {
        int64_t busy = 0;
        for (int p = 0; p < SP_FIRST_IDLE; p++)
            busy += t->ns[p];
        run->gpu_utilization = (double)busy / (double)t->wall;
        add_num(a->ev, "main_device", (double)st->devices[t->device].id);
    }
    return MB_OK;
}

/* The marks array, its first n rewritten as steps, becomes the steps, and
 * what they leave out before the first and after the last is kept. */
static void marks_become_steps(tr_state *st, tr_step **marks, size_t *n_marks, size_t *cap_marks, size_t n)
{
    free(st->steps);
    st->steps = *marks;
    st->n_steps = n;
    st->cap_steps = *cap_marks;
    *marks = NULL;
    *n_marks = *cap_marks = 0;
    st->before_first_step_ns = st->steps[0].start - st->span_start;
    st->after_last_step_ns = st->span_end - st->steps[st->n_steps - 1].end;
}

/* The outermost optimizer steps (sorted by start, none inside another: a
 * wrapper optimizer's holds its inner one's) to the front of opt_marks;
 * their number. */
static size_t outermost_optimizer_steps(tr_state *st)
{
    qsort(st->opt_marks, st->n_opt_marks, sizeof *st->opt_marks, cmp_step);
    size_t n = 0;
    for (size_t i = 0; i < st->n_opt_marks; i++)
        if (n == 0 || st->opt_marks[i].start >= st->opt_marks[n - 1].end)
            st->opt_marks[n++] = st->opt_marks[i];
    st->n_opt_marks = n;
    return n;
}

/* A trace without ProfilerStep#N (torch.profiler without a schedule, or
 * prof.step() never called) is one window from the profiler's start: CUDA's
 * context, each module's first launch, cuDNN's set-up and the DataLoader's
 * first batch read as the loop's host code (facebookresearch/param's
 * linear_kineto trace: 981 ms of a 2-s trace in its first cudaFree, "CPU
 * compute bound, 76%"). torch records every optimizer.step() as an
 * Optimizer.step# annotation: with three or more (outermost ones: a wrapper
 * optimizer's step holds its inner one's), a step ends where an optimizer
 * step ends and begins where the one before it ended; what lies before the
 * first and after the last is left out, as a ProfilerStep leaves out what is
 * not in it, and said (partial_reasons). */
static void steps_from_optimizer(tr_state *st)
{
    if (st->n_steps > 0 || st->n_opt_marks < 3)
        return;
    size_t n = outermost_optimizer_steps(st);
    if (n < 3)
        return;
    /* the marks array is at least n - 1 long: the steps take it over */
    for (size_t k = 1; k < n; k++)
        st->opt_marks[k - 1] = (tr_step){.number = (long long)k, .start = st->opt_marks[k - 1].end,
                                         .end = st->opt_marks[k].end};
    marks_become_steps(st, &st->opt_marks, &st->n_opt_marks, &st->cap_opt_marks, n - 1);
    st->steps_from_optimizer = true;
}

/* The user's annotations by name, then by start */
static int cmp_mark(const void *a, const void *b)
{
    const tr_step *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return cmp_step(a, b);
}

/* Of one name's marks (sorted by start), those that no earlier kept one
 * holds or overlaps (the outermost, one thread's), copied to `out` (which
 * may be m, or before it): their number and the time they cover. */
static size_t outermost_marks(const tr_step *m, size_t n, tr_step *out, int64_t *cover)
{
    size_t kept = 0;
    int64_t end = INT64_MIN;
    *cover = 0;
    for (size_t i = 0; i < n; i++) {
        if (kept > 0 && m[i].start < end)
            continue;
        end = m[i].end;
        *cover += m[i].end - m[i].start;
        out[kept++] = m[i];
    }
    return kept;
}

/* Whether marks (outermost, sorted) recur once an iteration: most of the
 * time from the first start to the last lies in periods (start to start)
 * within 3x their median. A name that recurs within an iteration (a layer's
 * annotation in the forward pass) has short periods and one long one, the
 * rest of the iteration, holding most of the time; a stall now and then in
 * a loop's iterations does not. `tmp` holds n - 1 values. */
static bool marks_regular(const tr_step *m, size_t n, int64_t *tmp)
{
    int64_t range = m[n - 1].start - m[0].start, far = 0;
    for (size_t i = 0; i + 1 < n; i++)
        tmp[i] = m[i + 1].start - m[i].start;
    qsort(tmp, n - 1, sizeof *tmp, cmp_i64);
    int64_t median = tmp[(n - 1) / 2];
    for (size_t i = 0; i + 1 < n; i++)
        if (tmp[i] > 3 * median)
            far += tmp[i];
    return range > 0 && 2 * far < range;
}

/* Whether the GPU work that starts between the first mark's start and the
 * last one's is at least half of all the trace's: marks recurring within
 * one iteration, the only one traced (a policy's ten denoising calls of one
 * compiled graph, openpi's H200 trace: nine 1.93-ms steps, 12.1 ms of
 * its GPU work outside them), mark no loop. Without GPU events there is nothing to weigh. */
static bool marks_hold_the_gpu_work(const tr_state *st, const tr_step *m, size_t n)
{
    int64_t in = 0, all = 0;
    for (int d = 0; d < st->n_devices; d++)
        for (size_t i = 0; i < st->devices[d].n_ev; i++) {
            const int64_t *e = &st->devices[d].ev[i * TR_EV_WORDS];
            int64_t dur = e[1] >> TR_EV_DUR_SHIFT;
            all += dur;
            in += e[0] >= m[0].start && e[0] < m[n - 1].start ? dur : 0;
        }
    return 2 * in >= all;
}

/* The user's own record_function around each iteration ("train_step"),
 * its outermost marks moved to marks[*at_best, + *n_best) of `marks` (the
 * trace's ann_marks, or a copy: sorted and compacted in place); -1: none.
 * A name qualifies with three
 * or more (outermost) instances that recur once an iteration
 * (marks_regular) over at least half the longest range any qualifying name
 * spans (an evaluation's batches after a longer training loop are not its
 * steps). Of those, the one with the fewest instances is the iteration (a
 * micro-batch's annotation recurs more often than the step that holds it);
 * of equals, the one covering the most time ("train_step" before the
 * "forward" inside it). A step runs from the start of one instance to the
 * start of the next: what runs between them (the next batch, logging) is
 * the iteration's, and any once-an-iteration mark gives the iterations'
 * period. Before the first and from the last one's start on is left out
 * and said, as for optimizer steps; unless less than half the GPU's work
 * lies between them (marks_hold_the_gpu_work). */
static int iteration_annotation(const tr_state *st, tr_step *marks, size_t *at_best, size_t *n_best)
{
    int64_t *tmp = malloc(st->n_ann_marks * sizeof *tmp);
    if (tmp == NULL)
        return -1; /* no steps: the trace reads as one window, as without marks */
    qsort(marks, st->n_ann_marks, sizeof *marks, cmp_mark);
    /* each name's outermost marks to the front of its run; [at, at + n) */
    size_t at[TR_MAX_ANN_NAMES], count[TR_MAX_ANN_NAMES] = {0};
    int64_t cover[TR_MAX_ANN_NAMES], range[TR_MAX_ANN_NAMES] = {0}, longest = 0;
    for (size_t i = 0, j; i < st->n_ann_marks; i = j) {
        for (j = i; j < st->n_ann_marks && marks[j].number == marks[i].number; j++)
            ;
        int k = (int)marks[i].number;
        at[k] = i;
        count[k] = outermost_marks(marks + i, j - i, marks + i, &cover[k]);
        if (count[k] >= 3 && marks_regular(marks + i, count[k], tmp)) {
            range[k] = marks[i + count[k] - 1].start - marks[i].start;
            if (range[k] > longest)
                longest = range[k];
        }
    }
    free(tmp);
    int best = -1;
    for (int k = 0; k < st->n_ann_names; k++)
        if (range[k] > 0 && 2 * range[k] >= longest &&
            (best < 0 || count[k] < count[best] || (count[k] == count[best] && cover[k] > cover[best])))
            best = k;
    if (best < 0 || !marks_hold_the_gpu_work(st, marks + at[best], count[best]))
        return -1;
    *at_best = at[best];
    *n_best = count[best];
    return best;
}

/* The fewest optimizer steps (the n outermost, sorted) that one of the
 * marks m[0 .. k - 1) holds whole; the last mark, whose step ends with the
 * trace, is left out (cut short, it may hold fewer). An annotation around
 * each iteration holds its optimizer steps; one inside it (a torch 1.13
 * array's "detach", once an iteration) holds none. */
static long long fewest_optimizer_steps(const tr_step *opt, size_t n, const tr_step *m, size_t k)
{
    long long fewest = LLONG_MAX;
    size_t j = 0;
    for (size_t i = 0; i + 1 < k; i++) {
        long long in = 0;
        while (j < n && opt[j].start < m[i].start)
            j++;
        for (size_t t = j; t < n && opt[t].start < m[i].end; t++)
            in += opt[t].end <= m[i].end;
        fewest = in < fewest ? in : fewest;
    }
    return fewest == LLONG_MAX ? 0 : fewest;
}

/* Steps about to be cut at the optimizer's (a GAN's two optimizers, traced
 * without prof.step(): 11 half-steps of 17.6 ms, alternately the
 * discriminator's and the generator's, for iterations of 37.1 ms): whether
 * the user's iteration annotation holds two or more optimizer steps whole,
 * said with the optimizer steps (optimizer_steps_said). Only said: an
 * annotation of the same regularity around several iterations (an epoch)
 * holds several optimizer steps too. Works on a copy of the marks, which
 * the annotation's own cut (steps_from_annotation) reads afterwards. */
static void iteration_over_optimizer_steps(tr_state *st)
{
    if (st->n_steps > 0 || st->n_ann_marks < 3 || st->n_opt_marks < 3)
        return;
    tr_step *copy = malloc(st->n_ann_marks * sizeof *copy);
    if (copy == NULL)
        return; /* not said */
    memcpy(copy, st->ann_marks, st->n_ann_marks * sizeof *copy);
    size_t at, n;
    int best = iteration_annotation(st, copy, &at, &n);
    if (best >= 0) {
        size_t n_opt = outermost_optimizer_steps(st);
        long long per = fewest_optimizer_steps(st->opt_marks, n_opt, copy + at, n);
        if (per >= 2) {
            st->opt_steps_per_ann = per;
            st->opt_ann_count = (long long)n;
            snprintf(st->opt_ann_name, sizeof st->opt_ann_name, "%s", st->ann_names[best]);
        }
    }
    free(copy);
}

/* Without ProfilerSteps or optimizer steps (a loop that updates its weights
 * by hand, or a custom optimizer), the user's own record_function around
 * each iteration marks the steps (iteration_annotation); a step runs from
 * the start of one instance to the start of the next. */
static void steps_from_annotation(tr_state *st)
{
    if (st->n_steps > 0 || st->n_ann_marks < 3)
        return;
    size_t at, n;
    int best = iteration_annotation(st, st->ann_marks, &at, &n);
    if (best < 0)
        return;
    memmove(st->ann_marks, st->ann_marks + at, n * sizeof *st->ann_marks);
    for (size_t k = 0; k + 1 < n; k++)
        st->ann_marks[k] = (tr_step){.number = (long long)k + 1, .start = st->ann_marks[k].start,
                                     .end = st->ann_marks[k + 1].start};
    marks_become_steps(st, &st->ann_marks, &st->n_ann_marks, &st->cap_ann_marks, n - 1);
    st->steps_from_annotation = true;
    snprintf(st->step_annotation, sizeof st->step_annotation, "%s", st->ann_names[best]);
    snprintf(st->step_windows_said, sizeof st->step_windows_said, "%s annotations", st->ann_names[best]);
}

/* Whether a start of one of the n intervals lies inside (a, b). */
static bool starts_inside(const int64_t *iv, size_t n, int64_t a, int64_t b)
{
    for (size_t i = 0; i < n; i++)
        if (iv[2 * i] > a && iv[2 * i] < b)
            return true;
    return false;
}

/* Whether the window (a, b) holds the start of an op, a runtime call or a
 * kernel the trace recorded. */
static bool window_holds_work(const tr_state *st, int64_t a, int64_t b)
{
    for (int k = 0; k < TR_CPU_N; k++)
        if (starts_inside(st->cpu_iv[k].iv, st->cpu_iv[k].n, a, b))
            return true;
    if (starts_inside(st->cpu_mem_unsized.iv, st->cpu_mem_unsized.n, a, b))
        return true;
    for (int k = 0; k < TR_N_HOST; k++)
        if (starts_inside(st->host_iv[k].iv, st->host_iv[k].n, a, b))
            return true;
    for (size_t i = 0; i < st->n_flop_ops; i++)
        if (st->flop_ops[i].start > a && st->flop_ops[i].start < b)
            return true;
    for (size_t i = 0; i < st->n_launches; i++)
        if (st->launches[i].ts > a && st->launches[i].ts < b)
            return true;
    for (int d = 0; d < st->n_devices; d++)
        for (size_t i = 0; i < st->devices[d].n_ev; i++)
            if (st->devices[d].ev[i * TR_EV_WORDS] > a && st->devices[d].ev[i * TR_EV_WORDS] < b)
                return true;
    return false;
}

/* ProfilerStep#N events that hold nothing, each far shorter than the time to
 * the next (an export of the legacy profiler: a 2-rank naive DDP loop's
 * three ProfilerSteps of 17-18 us, 2.8-2.9 ms apart, read "17.5 us per
 * step"), mark where each step begins: a step runs from one to the next,
 * and the last one's is left out. */
static void steps_from_markers(tr_state *st)
{
    if (st->n_steps < 3 || st->steps_from_optimizer || st->steps_from_annotation)
        return;
    qsort(st->steps, st->n_steps, sizeof *st->steps, cmp_step);
    for (size_t k = 0; k + 1 < st->n_steps; k++) {
        const tr_step *m = &st->steps[k], *next = &st->steps[k + 1];
        int64_t len = m->end - m->start;
        if (next->start - m->end <= 10 * len || window_holds_work(st, m->start, m->end))
            return;
    }
    const tr_step *last = &st->steps[st->n_steps - 1];
    if (window_holds_work(st, last->start, last->end))
        return;
    st->after_last_step_ns = st->span_end - last->start;
    for (size_t k = 0; k + 1 < st->n_steps; k++)
        st->steps[k].end = st->steps[k + 1].start;
    st->n_steps--;
    st->before_first_step_ns = st->steps[0].start - st->span_start;
    st->steps_from_markers = true;
}

/* A trace without steps is one window from its first event. GPU work that
 * ends before the host's first recorded event was launched before the
 * profiler's window (its launch would be a host event before it), and so was
 * everything it ran behind: it is no part of the run the host code shows.
 * efficient-dl-systems' A4000 ViT step: 224 GPU events drained from before
 * the window, then 3.78 s with nothing recorded, read "CPU compute bound,
 * 97.3%" for a step whose GPU is busy 97% of the part the host recorded. The
 * run starts at that first host event, or earlier at the start of GPU work
 * still running then. */
static void trim_pre_window_work(tr_state *st)
{
    if (st->n_steps > 0 || st->host_start == INT64_MAX || st->host_start <= st->span_start)
        return;
    int64_t start = st->host_start;
    bool gpu_in_window = false;
    for (int d = 0; d < st->n_devices; d++)
        for (size_t i = 0; i < st->devices[d].n_ev; i++) {
            const int64_t *w = st->devices[d].ev + i * TR_EV_WORDS;
            if (w[0] + ev_dur(w) > st->host_start) {
                start = imin(start, w[0]);
                gpu_in_window = true;
            }
        }
    /* All of the GPU's record before the host's: nothing of the run to cut to (the devices' evidence would
     * be divided by a host-only wall) */
    if (!gpu_in_window)
        return;
    st->pre_window_events = 0;
    st->pre_window_ns = 0;
    st->pre_window_end = INT64_MIN;
    for (int d = 0; d < st->n_devices; d++)
        for (size_t i = 0; i < st->devices[d].n_ev; i++) {
            const int64_t *w = st->devices[d].ev + i * TR_EV_WORDS;
            if (w[0] < start) {
                st->pre_window_events++;
                st->pre_window_ns += ev_dur(w);
                st->pre_window_end = imax(st->pre_window_end, w[0] + ev_dur(w));
            }
        }
    if (st->pre_window_events > 0)
        st->span_start = start;
}

void mb_tr_cut_steps(tr_state *st)
{
    iteration_over_optimizer_steps(st);
    steps_from_optimizer(st);
    steps_from_annotation(st);
    steps_from_markers(st);
    trim_pre_window_work(st);
}

const char *mb_tr_window(const tr_state *st)
{
    return st->n_steps == 0             ? "trace"
           : st->steps_from_optimizer   ? "Optimizer.step"
           : st->steps_from_annotation  ? st->step_annotation
                                        : "ProfilerStep";
}

const char *mb_tr_windows_said(const tr_state *st)
{
    return st->n_steps == 0             ? "trace"
           : st->steps_from_optimizer   ? "optimizer steps"
           : st->steps_from_annotation  ? st->step_windows_said
                                        : "ProfilerSteps";
}

/* A ProfilerStep that ends after the profiler's own span (cat "Trace",
 * "PyTorch Profiler (0)") did not end while it recorded: a window closed
 * late, a trace cut or edited by hand (HTA's triton_example marks a 1.5 ms
 * step 13.3 s long). It is cut at the span's end: nothing in the trace says
 * what ran after it, and the tail would read as host code. Without that
 * span a step's tail with no event is Python the profiler does not record,
 * and stays; a microsecond of rounding is left alone. */
static void cut_steps_at_profiler_end(analysis *a)
{
    tr_state *st = a->st;
    size_t cut = 0;
    int64_t most = 0;
    long long worst = -1;
    for (size_t s = 0; s < st->n_steps; s++) {
        tr_step *p = &st->steps[s];
        if (st->profiler_end == INT64_MIN || p->end - st->profiler_end <= 1000 || st->profiler_end <= p->start)
            continue;
        if (p->end - st->profiler_end > most) {
            most = p->end - st->profiler_end;
            worst = p->number;
        }
        p->end = st->profiler_end;
        cut++;
    }
    if (cut == 0)
        return;
    st->span_end = st->profiler_end;
    char t[32];
    mb_fmt_seconds(t, sizeof t, sec(most));
    partial(a, "%zu ProfilerStep%s end%s after the profiler's own span (ProfilerStep#%lld by %s): cut at its end, "
               "as nothing in the trace says what ran after it",
            cut, cut == 1 ? "" : "s", cut == 1 ? "s" : "", worst, t);
}

int mb_tr_analyse(tr_state *st, mb_run *run, mb_err *err)
{
    step_table table = {.t2 = NULL}; /* step_table_build fills it */
    analysis a = {.st = st, .run = run, .tablep = &table};
    int rc = MB_OK;
    cJSON **step_objs = NULL;
    size_t nd = st->n_devices > 0 ? (size_t)st->n_devices : 1;
    a.ev = cJSON_CreateObject();
    a.busy = calloc(nd, sizeof *a.busy);
    a.step_busy = calloc(nd, sizeof *a.step_busy);
    a.step_idle = calloc(nd, sizeof *a.step_idle);
    a.merged = calloc(nd, sizeof *a.merged);
    size_t n_emit = st->n_steps < MAX_STEPS_IN_EVIDENCE ? st->n_steps : MAX_STEPS_IN_EVIDENCE;
    step_objs = calloc(n_emit ? n_emit : 1, sizeof *step_objs);
    if (!a.ev || !a.busy || !a.step_busy || !a.step_idle || !a.merged || !step_objs) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    cJSON_AddStringToObject(a.ev, "reader", "pytorch-trace");
    a.partial = add_arr(a.ev, "partial");
    header_evidence(&a);

    /* 1. time order */
    mb_tr_cut_steps(st);
    if (st->n_steps > 0)
        qsort(st->steps, st->n_steps, sizeof *st->steps, cmp_step);
    cut_steps_at_profiler_end(&a);
    if (!mb_tr_pageable_copy_waits(st)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    st->n_host_wait = mb_tr_merge_intervals(st->host_wait, st->n_host_wait);
    for (int d = 0; d < st->n_devices; d++)
        qsort(st->devices[d].ev, st->devices[d].n_ev, TR_EV_WORDS * sizeof(int64_t), cmp_ev);

    /* 1b. the timeline the steps are cut on (before the launches are sorted), a kernel's first launch in
     * set-up */
    for (int i = 0; i < MAX_TRACE_STAGES; i++)
        a.stage_part[i] = -1;
    if (!mb_tr_first_launches(st) || !mb_tr_first_calls(st)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    closing_sync_without_steps(&a);
    rc = choose_timeline(&a, main_device(st), err);
    if (rc == MB_OK && !launch_ends(&a))
        rc = mb_errf(err, MB_ESYS, "out of memory");
    if (rc != MB_OK)
        goto done;

    /* 2. kernels -> shaped ops, of what the steps hold (the devices' events whole: step 4 merges them) */
    if (!unrecorded_kernels(&a)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    rc = count_in_steps(&a, err);
    if (rc == MB_OK)
        rc = host_calls_in_steps(&a, err);
    if (rc != MB_OK)
        goto done;
    rc = attribute_kernels(st, a.win, a.n_win, &a.attr, err);
    if (rc != MB_OK)
        goto done;

    /* 3. steps, per-step classes (raw events) */
    cJSON *steps = add_arr(a.ev, "steps");
    for (size_t s = 0; s < n_emit; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(steps, o);
        char name[96];
        snprintf(name, sizeof name, "%s%s%lld", step_said(st), st->steps_from_optimizer || st->steps_from_annotation
                 ? " " : "#", st->steps[s].number);
        add_str(o, "name", name);
        add_num(o, "step", (double)st->steps[s].number);
        add_num(o, "start_s", sec(st->steps[s].start - st->span_start));
        add_num(o, "seconds", sec(st->steps[s].end - st->steps[s].start));
        if (a.host_win) { /* the GPU's window above; the ProfilerStep's own here */
            add_num(o, "host_start_s", sec(a.host_win[2 * s] - st->span_start));
            add_num(o, "host_seconds", sec(a.host_win[2 * s + 1] - a.host_win[2 * s]));
        }
        add_arr(o, "devices");
        step_objs[s] = o;
    }
    if (st->n_steps > n_emit)
        add_num(a.ev, "steps_not_listed", (double)(st->n_steps - n_emit));
    steps_evidence(&a, step_objs, n_emit);
    if (!step_table_build(&a, step_objs, n_emit)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    step_table_json(&a);
    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(a.ev, "step")))
        timeline_json(&a, cJSON_GetObjectItemCaseSensitive(a.ev, "step"));

    /* each kind of copy's time alone on its device (raw events, before step 4) */
    for (int i = 0; i < TR_N_DIRS && rc == MB_OK; i++)
        for (int j = 0; j < TR_N_MEMS && rc == MB_OK; j++)
            if ((a.copy_alone[i][j] = copy_alone_ns(&a, i, j)) < 0)
                rc = mb_errf(err, MB_ESYS, "out of memory");
    if (rc != MB_OK)
        goto done;

    /* 4. busy intervals */
    cJSON *devices = add_arr(a.ev, "devices");
    cJSON *copies = add_arr(a.ev, "copies");
    device_evidence(&a, devices, copies);
    for (int d = 0; d < st->n_devices; d++)
        a.merged[d] = merge_events(st->devices[d].ev, st->devices[d].n_ev);
    busy_evidence(&a, devices, step_objs, n_emit);
    if (run_figures(&a) != MB_OK) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    host_evidence(&a);

    /* stages and the rest of the evidence */
    cJSON *rates = add_obj(a.ev, "rates");
    flop_group g[16];
    int ng = flop_groups(st, g, 16);
    bool has_flops[TR_N_OP_KINDS] = {false};
    for (int i = 0; i < ng; i++)
        has_flops[g[i].kind] = true;
    rc = flop_stages(&a, g, ng, rates, err);
    cJSON *nos = add_obj(rates, "ops_without_shapes");
    add_num(nos, "gemm", (double)st->ops_without_shapes[TR_OP_GEMM]);
    add_num(nos, "conv", (double)st->ops_without_shapes[TR_OP_CONV]);
    add_num(nos, "attention", (double)st->ops_without_shapes[TR_OP_ATTN]);
    add_num(nos, "memory_bound", (double)st->ops_without_shapes[TR_OP_MEM]);
    if (rc == MB_OK)
        rc = memory_stage(&a, rates, err);
    if (rc == MB_OK)
        rc = class_stages(&a, has_flops, err);
    cJSON *colls = add_arr(a.ev, "collectives");
    if (rc == MB_OK)
        rc = collective_stages(&a, colls, err);
    if (rc == MB_OK)
        rc = copy_stages(&a, err);
    if (rc == MB_OK)
        rc = host_stages(&a, err);
    if (rc == MB_OK && st->n_devices == 0)
        rc = mb_tr_cpu_stages(st, run, a.ev, err); /* CPU-only: the host's ops are the step */
    if (rc == MB_OK)
        rc = idle_stages(&a, err);
    if (rc != MB_OK)
        goto done;
    partial_reasons(&a);
    if (!concurrent_copies(&a)) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    /* one step time in every view: the step table's (the mean of its
     * windows), when there is one; else the median ProfilerStep */
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(a.ev, "step");
    const cJSON *step_s = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "seconds") : NULL;
    if (st->n_steps > 0 && cJSON_IsNumber(step_s) && step_s->valuedouble > 0)
        run->step_seconds = step_s->valuedouble;
    run->evidence = a.ev;
    a.ev = NULL;
done:
    cJSON_Delete(a.ev);
    free(table.t2);
    mb_tr_timeline_free(&a.tl);
    free(a.host_win);
    free(a.launch_end);
    free(a.win);
    free(a.busy);
    free(a.step_busy);
    free(a.step_idle);
    free(a.merged);
    free(step_objs);
    return rc;
}

double mb_tr_median_i64(int64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : 0.5 * (double)v[n / 2 - 1] + 0.5 * (double)v[n / 2]; /* no int64 sum */
}

size_t mb_tr_merge_intervals(int64_t *iv, size_t n)
{
    if (n > 0)
        qsort(iv, n, 2 * sizeof *iv, cmp_pair);
    return merge_pairs(iv, n);
}

int64_t mb_tr_intersection(const int64_t *x, size_t nx, const int64_t *y, size_t ny)
{
    return clip_intersection(x, nx, y, ny, INT64_MIN, INT64_MAX);
}

void mb_tr_sort_flop_ops(tr_state *st)
{
    if (st->n_flop_ops > 1) /* qsort takes no NULL array, not even an empty one */
        qsort(st->flop_ops, st->n_flop_ops, sizeof *st->flop_ops, cmp_op);
    mb_tr_apply_sparse(st);
}
