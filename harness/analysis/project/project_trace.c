/* project_trace.c: a Kineto trace, kernel by kernel, for the projection
 * (project.h). One pass of the trace reader (mb_trace_walk) keeps each GPU
 * event with its grid, block and stream, each launch and sync call, each
 * profiler step, and the FLOPs or bytes of ops with recorded shapes by their
 * External id (a kernel carries its op's). Then, per step, the events go
 * through the kernel model and the timeline re-lay. */
#include "project.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "trace.h"

typedef struct pt_gpu {
    int64_t ts, dur, stream, corr, ext;
    int cls, math, dir;
    int elem_bytes; /* what its name says of its elements (mb_tr_kernel_elem_bytes); 0 none */
    int step; /* the step whose host code launched it (by correlation id); -1 none */
    int64_t launch_end; /* when that launch call returned; INT64_MIN none */
    double blocks, threads;
    double flops, bytes; /* the kernel's share of its op's */
    double link_bytes;   /* a collective kernel: the bytes its rank's link carries (tr_event_view); -1 */
} pt_gpu;

typedef struct pt_host {
    int64_t thread, ts, dur, corr;
    int kind; /* MB_PE_LAUNCH / MB_PE_SYNC */
} pt_host;

typedef struct pt_op {
    int64_t ext;
    double flops, bytes;
    int dtype;
    bool matmul;                /* a matmul/conv op: dropped when it runs a sparse-only op (drop_sparse_ops) */
    bool per_elem;              /* bytes with 1-byte elements: its kernel names the size (mb_tr_op_list_unit_bytes) */
    int64_t thread, ts, end;
} pt_op;

struct mb_proj_trace {
    pt_gpu *gpu;
    size_t n_gpu, cap_gpu;
    pt_host *host;
    size_t n_host, cap_host;
    tr_call *enqueues; /* asynchronous copy and memset calls (TR_V_ENQUEUE): the steps' cut only */
    size_t n_enqueues, cap_enqueues;
    pt_op *ops;
    size_t n_ops, cap_ops;
    tr_mark *sparse;            /* ops only a sparse tensor calls (mb_tr_sparse_marker) */
    size_t n_sparse, cap_sparse;
    int64_t *steps; /* [start, end) pairs */
    size_t n_steps, cap_steps;
    char device[128];
    double max_threads_per_sm;
    /* The timeline the steps are cut on (trace_timeline.c, as the step table
     * cuts them). tl.gpu: the host runs ahead, tl.win holds the GPU's windows
     * and host_ns each step's host time (its ProfilerStep less the closing
     * synchronize and the synchronizes before its first launch), the least a
     * step takes whatever the GPU. */
    tr_timeline tl;
    int64_t *host_ns;
};

static int math_of_dtype(int dtype_index)
{
    const char *d = mb_tr_dtype_name(dtype_index);
    if (d == NULL)
        return -1;
    static const char *const names[MB_PM_N] = { "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64" };
    for (int m = 0; m < MB_PM_N; m++)
        if (strcmp(d, names[m]) == 0)
            return m;
    return -1;
}

static int keep_gpu(mb_proj_trace *t, const tr_event_view *v, mb_err *err)
{
    if (!mb_grow((void **)&t->gpu, &t->cap_gpu, t->n_gpu + 1, sizeof *t->gpu))
        return mb_errf(err, MB_ESYS, "out of memory");
    pt_gpu *g = &t->gpu[t->n_gpu++];
    memset(g, 0, sizeof *g);
    g->ts = v->ts;
    g->dur = v->dur;
    /* one lane per (device, stream): two GPUs' stream 7 are two queues */
    g->stream = (int64_t)((uint64_t)(v->device >= 0 ? v->device : 0) * 1000003ULL ^ (uint64_t)v->stream);
    g->corr = v->corr;
    g->ext = v->ext_id;
    g->cls = v->cls;
    g->dir = v->kind == TR_V_MEMCPY ? v->copy_dir : -1;
    g->math = v->kind == TR_V_KERNEL ? mb_tr_kernel_math(v->name, strlen(v->name)) : -1;
    g->elem_bytes = v->kind == TR_V_KERNEL ? mb_tr_kernel_elem_bytes(v->name, strlen(v->name)) : 0;
    if (v->grid[0] > 0)
        g->blocks = (double)v->grid[0] * (double)(v->grid[1] > 0 ? v->grid[1] : 1) *
                    (double)(v->grid[2] > 0 ? v->grid[2] : 1);
    if (v->block[0] > 0)
        g->threads = (double)v->block[0] * (double)(v->block[1] > 0 ? v->block[1] : 1) *
                     (double)(v->block[2] > 0 ? v->block[2] : 1);
    if (v->kind != TR_V_KERNEL && v->bytes > 0)
        g->bytes = v->bytes;
    g->link_bytes = v->kind == TR_V_KERNEL && v->cls == TR_CLASS_NCCL ? v->link_bytes : -1;
    return MB_OK;
}

static int keep_host(mb_proj_trace *t, const tr_event_view *v, mb_err *err)
{
    if (!mb_grow((void **)&t->host, &t->cap_host, t->n_host + 1, sizeof *t->host))
        return mb_errf(err, MB_ESYS, "out of memory");
    t->host[t->n_host++] = (pt_host){ .thread = v->thread, .ts = v->ts, .dur = v->dur, .corr = v->corr,
                                      .kind = v->kind == TR_V_LAUNCH ? MB_PE_LAUNCH : MB_PE_SYNC };
    return MB_OK;
}

/* Attention ops: FLOPs from the query and key shapes (mb_tr_attention_shape,
 * shared with the trace reader; mb_proj_sdpa_flops), bytes: Q, K, V and the
 * output once. The causal flag is not applied here: full attention is
 * counted, twice the work of a causal one (the trace reader's attention
 * stage does apply it). */
static bool sdpa_work(const tr_event_view *v, double *flops, double *bytes)
{
    tr_attention a;
    if (!mb_tr_attention_shape(v->name, v->sh, &a))
        return false;
    *flops = mb_proj_sdpa_flops(a.b, a.h, a.l, a.s, a.d, a.backward, false);
    *bytes = (a.esize > 0 ? a.esize : 2) * (2 * a.b * a.h * a.l * a.d + 2 * a.b * a.h * a.s * a.d);
    return *flops > 0;
}

/* FLOPs (matmul/conv/attention) or bytes (memory-bound ops) of an op with shapes. */
static int keep_op(mb_proj_trace *t, const tr_event_view *v, mb_err *err)
{
    if (v->ext_id < 0 || v->sh->n_tensors == 0)
        return MB_OK;
    int kind = mb_tr_op_kind(v->name);
    double flops = 0, bytes = 0;
    const char *why;
    bool per_elem = false;
    if (sdpa_work(v, &flops, &bytes)) {
        kind = TR_OP_GEMM;
    } else if (kind == TR_OP_GEMM || kind == TR_OP_CONV) {
        if (!mb_tr_op_flops(v->name, v->sh, &flops, &why))
            return MB_OK;
        if (!mb_tr_op_bytes(TR_MOP_OUT, v->sh, &bytes, &why))
            bytes = 0;
    } else if (strncmp(v->name, "aten::", 6) == 0) {
        int model = mb_tr_classify(v->rules, TR_SET_MEMOP, v->name, strlen(v->name));
        if (model == TR_MOP_NONE)
            return MB_OK;
        if (!mb_tr_op_bytes(model, v->sh, &bytes, &why)) {
            per_elem = mb_tr_op_list_unit_bytes(model, v->sh, &bytes);
            if (!per_elem)
                return MB_OK;
        }
    } else {
        return MB_OK;
    }
    if (!mb_grow((void **)&t->ops, &t->cap_ops, t->n_ops + 1, sizeof *t->ops))
        return mb_errf(err, MB_ESYS, "out of memory");
    int dtype = 0;
    for (int i = 0; i < v->sh->n_types && dtype == 0; i++)
        dtype = mb_tr_dtype_index(mb_tr_dtype_of_torch(v->sh->types[i]));
    t->ops[t->n_ops++] = (pt_op){ .ext = v->ext_id, .flops = flops, .bytes = bytes, .dtype = dtype,
                                  .matmul = kind == TR_OP_GEMM, .per_elem = per_elem, .thread = v->thread,
                                  .ts = v->ts, .end = v->ts + v->dur };
    return MB_OK;
}

static int keep_sparse_mark(mb_proj_trace *t, const tr_event_view *v, mb_err *err)
{
    if (!mb_grow((void **)&t->sparse, &t->cap_sparse, t->n_sparse + 1, sizeof *t->sparse))
        return mb_errf(err, MB_ESYS, "out of memory");
    t->sparse[t->n_sparse++] = (tr_mark){ v->thread, v->ts, v->ts + v->dur };
    return MB_OK;
}

/* A matmul around a sparse-only op multiplies a sparse operand: its shapes
 * give the dense product's FLOPs, not its work (the trace reader's
 * mb_tr_apply_sparse): its kernels keep their time, as an op's without
 * shapes. */
static void drop_sparse_ops(mb_proj_trace *t)
{
    if (t->n_sparse == 0)
        return;
    mb_tr_sort_marks(t->sparse, t->n_sparse);
    size_t kept = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        const pt_op *op = &t->ops[i];
        if (!op->matmul || !mb_tr_mark_within(t->sparse, t->n_sparse, op->thread, op->ts, op->end))
            t->ops[kept++] = *op;
    }
    t->n_ops = kept;
}

static int on_event(void *ctx, const tr_event_view *v, mb_err *err)
{
    mb_proj_trace *t = ctx;
    switch (v->kind) {
    case TR_V_KERNEL:
    case TR_V_MEMCPY:
    case TR_V_MEMSET:
        return keep_gpu(t, v, err);
    case TR_V_LAUNCH:
    case TR_V_SYNC:
        return keep_host(t, v, err);
    case TR_V_ENQUEUE:
        if (!mb_grow((void **)&t->enqueues, &t->cap_enqueues, t->n_enqueues + 1, sizeof *t->enqueues))
            return mb_errf(err, MB_ESYS, "out of memory");
        t->enqueues[t->n_enqueues++] = (tr_call){ .corr = v->corr, .ts = v->ts, .end = v->ts + v->dur };
        return MB_OK;
    case TR_V_CPU_OP:
        if (mb_tr_sparse_marker(v->name))
            return keep_sparse_mark(t, v, err);
        return keep_op(t, v, err);
    case TR_V_STEP:
        if (!mb_grow((void **)&t->steps, &t->cap_steps, (t->n_steps + 1) * 2, sizeof *t->steps))
            return mb_errf(err, MB_ESYS, "out of memory");
        t->steps[t->n_steps * 2] = v->ts;
        t->steps[t->n_steps * 2 + 1] = v->ts + v->dur;
        t->n_steps++;
        return MB_OK;
    default:
        return MB_OK;
    }
}

/* qsort and bsearch take no NULL array, not even an empty one. */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

static int cmp_op(const void *a, const void *b)
{
    int64_t x = ((const pt_op *)a)->ext, y = ((const pt_op *)b)->ext;
    return (x > y) - (x < y);
}

static int cmp_gpu_ext(const void *a, const void *b)
{
    const pt_gpu *x = a, *y = b;
    if (x->ext != y->ext)
        return (x->ext > y->ext) - (x->ext < y->ext);
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_gpu_ts(const void *a, const void *b)
{
    int64_t x = ((const pt_gpu *)a)->ts, y = ((const pt_gpu *)b)->ts;
    return (x > y) - (x < y);
}

static int cmp_host_ts(const void *a, const void *b)
{
    int64_t x = ((const pt_host *)a)->ts, y = ((const pt_host *)b)->ts;
    return (x > y) - (x < y);
}

static int cmp_step(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x > y) - (x < y);
}

/* Each kernel takes its op's FLOPs and bytes in proportion to its time among
 * the op's kernels (an op may launch several), and the op's dtype where its
 * name says none (or a 16-bit float where the op's is bf16). */
static void attribute_ops(mb_proj_trace *t)
{
    drop_sparse_ops(t);
    sort(t->ops, t->n_ops, sizeof *t->ops, cmp_op);
    sort(t->gpu, t->n_gpu, sizeof *t->gpu, cmp_gpu_ext);
    for (size_t i = 0; i < t->n_gpu;) {
        size_t j = i;
        int64_t sum = 0;
        while (j < t->n_gpu && t->gpu[j].ext == t->gpu[i].ext) {
            if (t->gpu[j].dir < 0 && t->gpu[j].cls != TR_CLASS_MEMSET)
                sum += t->gpu[j].dur;
            j++;
        }
        pt_op key = { .ext = t->gpu[i].ext };
        const pt_op *op =
            t->gpu[i].ext >= 0 && t->n_ops > 0 ? bsearch(&key, t->ops, t->n_ops, sizeof *t->ops, cmp_op) : NULL;
        double op_bytes = op ? op->bytes : 0;
        if (op && op->per_elem) { /* its kernels name its element size: one, or its bytes stay unknown */
            int es = 0;
            for (size_t k = i; k < j && es >= 0; k++)
                if (t->gpu[k].elem_bytes > 0)
                    es = es == 0 || es == t->gpu[k].elem_bytes ? t->gpu[k].elem_bytes : -1;
            op_bytes *= es > 0 ? es : 0;
        }
        for (size_t k = i; op && sum > 0 && k < j; k++) {
            pt_gpu *g = &t->gpu[k];
            if (g->dir >= 0 || g->cls == TR_CLASS_MEMSET)
                continue;
            double share = (double)g->dur / (double)sum;
            g->flops = op->flops * share;
            g->bytes = op_bytes * share;
            /* The op's dtype where the name says none, or where it says "f16" of bf16
             * inputs: cuDNN names its bf16 flash-attention kernels ..._f16_... */
            int op_math = math_of_dtype(op->dtype);
            if (g->math < 0 || (g->math == MB_PM_FP16 && op_math == MB_PM_BF16))
                g->math = op_math;
        }
        i = j;
    }
    sort(t->gpu, t->n_gpu, sizeof *t->gpu, cmp_gpu_ts);
    sort(t->host, t->n_host, sizeof *t->host, cmp_host_ts);
    sort(t->steps, t->n_steps, 2 * sizeof *t->steps, cmp_step);
}

static int cmp_call(const void *a, const void *b)
{
    const tr_call *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

/* Each step's host time: its ProfilerStep, less (when the host runs ahead)
 * the closing synchronize and a synchronize that starts in the step before
 * its first launch, which waits for earlier steps' GPU work (TraceLens's
 * H100 Qwen1.5 step opens with 14.1 ms of cudaDeviceSynchronize on the
 * warm-up's kernels: a 47.2 ms floor on a step the GPU ran in 35.2 ms).
 * trace_analysis.c's step.host_seconds reads the same. One pass over the
 * host events (sorted by start); false when out of memory. */
static bool host_time_per_step(mb_proj_trace *t)
{
    int64_t *first = malloc(sizeof *first * (t->n_steps + 1));
    if (first == NULL)
        return false;
    for (size_t k = 0; k < t->n_steps; k++) {
        first[k] = t->steps[2 * k + 1];
        t->host_ns[k] = t->steps[2 * k + 1] - t->steps[2 * k];
    }
    for (size_t i = 0; i < t->n_host; i++) {
        long k = t->host[i].kind == MB_PE_LAUNCH ? mb_tr_window_of(t->steps, t->n_steps, t->host[i].ts) : -1;
        if (k >= 0 && t->host[i].ts < first[k])
            first[k] = t->host[i].ts;
    }
    for (size_t i = 0; t->tl.gpu && i < t->n_host; i++) {
        const pt_host *h = &t->host[i];
        if (h->kind != MB_PE_SYNC)
            continue;
        int64_t end = h->ts + h->dur;
        if (h->ts >= t->tl.last_launch) { /* the closing synchronize: no step's, in whichever it lands */
            for (size_t k = 0; k < t->n_steps; k++) {
                int64_t a = h->ts > t->steps[2 * k] ? h->ts : t->steps[2 * k];
                int64_t b = end < t->steps[2 * k + 1] ? end : t->steps[2 * k + 1];
                t->host_ns[k] -= b > a ? b - a : 0;
            }
            continue;
        }
        long k = mb_tr_window_of(t->steps, t->n_steps, h->ts);
        if (k >= 0 && h->ts < first[k])
            t->host_ns[k] -= (end < first[k] ? end : first[k]) - h->ts;
    }
    free(first);
    return true;
}

/* The timeline of the steps (trace_timeline.c), each GPU event's step, and
 * the host's own time per step; with the host's timeline nothing changes. */
static int cut_steps(mb_proj_trace *t, mb_err *err)
{
    size_t nl = 0;
    tr_call *calls = malloc(sizeof *calls * (t->n_host + t->n_enqueues + 1));
    tr_gpu_span *spans = malloc(sizeof *spans * (t->n_gpu + 1));
    t->host_ns = calloc(t->n_steps + 1, sizeof *t->host_ns);
    if (calls == NULL || spans == NULL || t->host_ns == NULL)
        goto oom;
    for (size_t i = 0; i < t->n_host; i++)
        if (t->host[i].kind == MB_PE_LAUNCH)
            calls[nl++] = (tr_call){ .corr = t->host[i].corr, .ts = t->host[i].ts, .end = t->host[i].ts + t->host[i].dur };
    for (size_t i = 0; i < t->n_gpu; i++)
        spans[i] = (tr_gpu_span){ .corr = t->gpu[i].corr, .start = t->gpu[i].ts, .end = t->gpu[i].ts + t->gpu[i].dur };
    /* the timeline is cut as the step table's (trace_analysis.c choose_timeline): launches and enqueued copies */
    size_t nlaunch = nl;
    if (t->n_enqueues > 0)
        memcpy(calls + nl, t->enqueues, sizeof *calls * t->n_enqueues);
    if (!mb_tr_timeline(t->steps, t->n_steps, calls, nl + t->n_enqueues, spans, t->n_gpu, &t->tl))
        goto oom;
    nl = nlaunch;
    sort(calls, nl, sizeof *calls, cmp_call);
    for (size_t i = 0; i < t->n_gpu; i++) {
        tr_call key = { .corr = t->gpu[i].corr };
        const tr_call *c = t->gpu[i].corr >= 0 && nl ? bsearch(&key, calls, nl, sizeof *calls, cmp_call) : NULL;
        t->gpu[i].step = c ? (int)mb_tr_window_of(t->steps, t->n_steps, c->ts) : -1;
        t->gpu[i].launch_end = c ? c->end : INT64_MIN;
    }
    if (!host_time_per_step(t))
        goto oom;
    free(calls);
    free(spans);
    return MB_OK;
oom:
    free(calls);
    free(spans);
    return mb_errf(err, MB_ESYS, "out of memory");
}

static void read_device(mb_proj_trace *t, const cJSON *props)
{
    const cJSON *d = cJSON_IsArray(props) ? cJSON_GetArrayItem(props, 0) : NULL;
    const cJSON *name = d ? cJSON_GetObjectItemCaseSensitive(d, "name") : NULL;
    const cJSON *mt = d ? cJSON_GetObjectItemCaseSensitive(d, "maxThreadsPerMultiprocessor") : NULL;
    if (cJSON_IsString(name))
        snprintf(t->device, sizeof t->device, "%s", name->valuestring);
    if (cJSON_IsNumber(mt) && mt->valuedouble > 0)
        t->max_threads_per_sm = mt->valuedouble;
}

int mb_proj_trace_load(const char *path, mb_proj_trace **out, mb_err *err)
{
    *out = NULL;
    mb_proj_trace *t = calloc(1, sizeof *t);
    cJSON *props = NULL;
    if (t == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_trace_walk(path, on_event, t, &props, err);
    if (rc == MB_OK && t->n_gpu == 0)
        rc = mb_errf(err, MB_EUSAGE, "%s: no GPU kernels in the trace: nothing to project kernel by kernel", path);
    if (rc != MB_OK) {
        cJSON_Delete(props);
        mb_proj_trace_free(t);
        return rc;
    }
    read_device(t, props);
    cJSON_Delete(props);
    attribute_ops(t);
    if ((rc = cut_steps(t, err)) != MB_OK) {
        mb_proj_trace_free(t);
        return rc;
    }
    *out = t;
    return MB_OK;
}

void mb_proj_trace_free(mb_proj_trace *t)
{
    if (t == NULL)
        return;
    mb_tr_timeline_free(&t->tl);
    free(t->host_ns);
    free(t->gpu);
    free(t->host);
    free(t->enqueues);
    free(t->ops);
    free(t->sparse);
    free(t->steps);
    free(t);
}

const char *mb_proj_trace_device(const mb_proj_trace *t)
{
    return t ? t->device : "";
}

int mb_proj_trace_steps(const mb_proj_trace *t)
{
    return t && t->n_steps > 0 ? (int)t->n_steps : 1;
}

/* ---- projecting one step ------------------------------------------------------ */

static bool is_tensor_kernel(const pt_gpu *g, const tr_rules *r)
{
    if (g->cls == TR_CLASS_GEMM || g->cls == TR_CLASS_CONV)
        return true;
    return g->cls >= TR_CLASS_FIXED && g->cls < r->n_classes && strcmp(r->class_names[g->cls], "attention") == 0;
}

static int kind_of(const pt_gpu *g, const tr_rules *r)
{
    if (g->cls == TR_CLASS_NCCL || g->dir == TR_DIR_P2P) /* GPU to GPU: communication */
        return MB_PK_COLLECTIVE;
    if (g->dir == TR_DIR_H2D || g->dir == TR_DIR_D2H)
        return MB_PK_TRANSFER;
    if (g->dir >= 0 || g->cls == TR_CLASS_MEMSET)
        return MB_PK_MEMORY;
    if (g->cls == TR_CLASS_GEMM)
        return MB_PK_GEMM;
    if (g->cls == TR_CLASS_CONV)
        return MB_PK_CONV;
    return is_tensor_kernel(g, r) ? MB_PK_ATTENTION : MB_PK_MEMORY;
}

/* The class of the step's split a kind's time is shown in. */
static int class_of_kind(int kind)
{
    switch (kind) {
    case MB_PK_GEMM:
    case MB_PK_CONV:
    case MB_PK_ATTENTION: /* flash attention is matrix math, not a memory-bound kernel */
        return MB_PC_TENSOR;
    case MB_PK_TRANSFER:
        return MB_PC_COPY;
    case MB_PK_COLLECTIVE:
        return MB_PC_COMM;
    default:
        return MB_PC_MEMORY;
    }
}

/* A collective kernel on another GPU's link (GPU to GPU: NVLink, or PCIe on
 * a card without it). Only the time the link's rate accounts for here
 * scales: its bytes at this link's rate. The rest is latency and waiting for
 * the other ranks, which no faster link shortens: a 2-A100 MoE trace's
 * all-to-all ran at 6.5 MB/s, a rank waiting for its peer, and scaled by the
 * link ratio it read 2x slower on a V100 SXM2. Without a size, all of it
 * scales. Kept where either link is unknown. */
static double project_collective(const pt_gpu *g, double s, const mb_proj_gpu *here, const mb_proj_gpu *there)
{
    if (here->link_bw <= 0 || there->link_bw <= 0)
        return s;
    if (g->link_bytes < 0)
        return s * here->link_bw / there->link_bw;
    double wire = fmin(s, g->link_bytes / here->link_bw);
    return s - wire + wire * here->link_bw / there->link_bw;
}

/* A copy or collective scales by its link; a kernel by the model. */
static double project_gpu(const pt_gpu *g, bool tensor, const mb_proj_gpu *here, const mb_proj_gpu *there,
                          mb_proj_outcome *o)
{
    double s = (double)g->dur * 1e-9;
    if (there == NULL)
        return s;
    if (g->dir == TR_DIR_H2D || g->dir == TR_DIR_D2H)
        return here->pcie_bw > 0 && there->pcie_bw > 0 ? s * here->pcie_bw / there->pcie_bw : s;
    if (g->cls == TR_CLASS_NCCL)
        return project_collective(g, s, here, there);
    if (g->dir >= 0 || g->cls == TR_CLASS_MEMSET)
        return s * here->bw / there->bw;
    mb_proj_kernel k = { .seconds = s, .flops = g->flops, .bytes = g->bytes, .tensor = tensor,
                         .math = g->math >= 0 ? g->math : MB_PM_FP32, .blocks = g->blocks, .threads = g->threads };
    mb_proj_result r = mb_proj_kernel_time(&k, here, there);
    o->kernels++;
    o->with_shapes += g->flops > 0 || g->bytes > 0;
    o->latency_bound += r.bound == MB_PB_LATENCY;
    o->compute_bound += r.bound == MB_PB_COMPUTE;
    o->memory_bound += r.bound == MB_PB_MEMORY;
    o->no_peak += r.no_peak;
    return r.seconds;
}

typedef struct lane_map {
    int64_t key[256];
    int n;
} lane_map;

/* A small index for a thread or stream (lanes past 255 share the last). */
static int lane_of(lane_map *m, int64_t key)
{
    for (int i = 0; i < m->n; i++)
        if (m->key[i] == key)
            return i;
    if (m->n < 256)
        m->key[m->n++] = key;
    return m->n - 1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Idle [x, y) in a gap before a compute kernel: the GPU's own time between
 * kernels when that kernel was queued (its launch had returned by the gap's
 * start) and the idle is as short as launching it takes, as in the step
 * table (trace_analysis.c, idle_to); else the host's (the rest of the step,
 * split_step). */
static void idle_to(int64_t x, int64_t y, bool queued, double *ns)
{
    if (queued && y > x && y - x <= MB_KERNEL_WAIT_MAX_NS)
        ns[MB_PC_QUEUED] += (double)(y - x);
}

/* Copies and collectives yield to compute, as in the step table
 * (trace_analysis.c, step_window): in a gap [x, y) between compute kernels
 * the copies and collectives (t2: disjoint [start, end, class) triples,
 * sorted, from *from on, a cursor that only moves forward) take what they
 * cover; the idle pieces between them go to the queue when `queued`. */
static void fill_gap(const int64_t *t2, int n2, int *from, int64_t x, int64_t y, bool queued, double *ns)
{
    while (*from < n2 && t2[3 * *from + 1] <= x)
        (*from)++;
    int64_t at = x;
    for (int i = *from; i < n2 && t2[3 * i] < y; i++) {
        int64_t lo = t2[3 * i] > at ? t2[3 * i] : at, hi = t2[3 * i + 1] < y ? t2[3 * i + 1] : y;
        if (hi <= lo)
            continue;
        idle_to(at, lo, queued, ns);
        ns[t2[3 * i + 2]] += (double)(hi - lo);
        at = hi;
    }
    idle_to(at, y, queued, ns);
}

enum { REC_WORDS = 4 }; /* busy_by_class: start, end, class, its launch's end (INT64_MAX: none) */

/* When the launch call of GPU event e returned, on the re-laid timeline
 * (ns); INT64_MAX when no launch was recorded (an unknown launch is the
 * host's, as in the step table). A launch outside the step's events (the
 * host ran ahead: the GPU's step is re-laid alone, keeping its gaps) moves
 * with its kernel, so a gap queued here stays queued. */
static int64_t launch_end_ns(const mb_proj_event *ev, const mb_proj_event *e)
{
    if (e->launch >= 0)
        return llround(ev[e->launch].new_end * 1e9);
    if (e->launch_known)
        return llround((e->launch_end + e->new_start - e->start) * 1e9);
    return INT64_MAX;
}

/* The re-laid GPU events' busy time by class: compute kernels sweep first
 * (time newly covered goes to the kernel covering it first), copies and
 * collectives take the gaps between them (each one's time not covered by an
 * earlier-starting one, in t2); the idle in a gap before a kernel already
 * launched is kernel wait (cls[MB_PC_QUEUED]: on a faster GPU a launch that
 * returned before the gap here may return after it, and the gap is then
 * the host's). rec holds REC_WORDS words a GPU event, t2 3. Returns the busy
 * seconds; cls[] gets seconds per class. */
static double busy_by_class(const mb_proj_event *ev, const int *kind, int n, int64_t *rec, int64_t *t2,
                            double *cls)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].kind == MB_PE_GPU) {
            int64_t *r = rec + REC_WORDS * m++;
            r[0] = llround(ev[i].new_start * 1e9);
            r[1] = llround(ev[i].new_end * 1e9);
            r[2] = class_of_kind(kind[i]);
            r[3] = launch_end_ns(ev, &ev[i]);
        }
    sort(rec, (size_t)m, REC_WORDS * sizeof *rec, cmp_i64);
    int n2 = 0;
    int64_t frontier = INT64_MIN;
    for (int i = 0; i < m; i++) {
        const int64_t *r = rec + REC_WORDS * i;
        int c = (int)r[2];
        if ((c != MB_PC_COPY && c != MB_PC_COMM) || r[1] <= frontier)
            continue;
        t2[3 * n2] = r[0] > frontier ? r[0] : frontier;
        t2[3 * n2 + 1] = r[1];
        t2[3 * n2 + 2] = c;
        n2++;
        frontier = r[1];
    }
    double ns[MB_PC_N] = { 0 };
    /* from the step's start (0), or its earliest event when that starts before: the gap before the first kernel
     * is the queue's when that kernel was launched before it (a host that ran ahead), as in the step table */
    frontier = m > 0 && rec[0] < 0 ? rec[0] : 0;
    int from = 0;
    for (int i = 0; i < m; i++) {
        const int64_t *r = rec + REC_WORDS * i;
        int c = (int)r[2];
        if (c == MB_PC_COPY || c == MB_PC_COMM || r[1] <= frontier)
            continue;
        if (r[0] > frontier) {
            fill_gap(t2, n2, &from, frontier, r[0], r[3] <= frontier, ns);
            frontier = r[0];
        }
        ns[c] += (double)(r[1] - frontier);
        frontier = r[1];
    }
    fill_gap(t2, n2, &from, frontier, INT64_MAX, false, ns);
    double busy = 0;
    for (int c = 0; c < MB_PC_N; c++) {
        cls[c] = ns[c] * 1e-9;
        if (c < MB_PC_QUEUED)
            busy += cls[c];
    }
    return busy;
}

/* Splits a step: the GPU's busy time by class as busy_by_class gave it
 * (scaled down where the GPU's work runs past the step), its kernel wait
 * (what of it the step holds), the rest of the step is host (the GPU
 * idle). */
static void split_step(mb_proj_step_split *sp, double step, double busy, const double *cls)
{
    double scale = busy > step && busy > 0 ? step / busy : 1;
    busy = fmin(busy, step);
    double queued = fmin(cls[MB_PC_QUEUED], step - busy);
    sp->step += step;
    sp->gpu_busy += busy;
    for (int c = 0; c < MB_PC_QUEUED; c++)
        sp->cls[c] += cls[c] * scale;
    sp->cls[MB_PC_QUEUED] += queued;
    sp->cls[MB_PC_HOST] += step - busy - queued;
}

typedef struct step_work {
    mb_proj_event *ev;
    size_t cap_ev;
    double *proj;   /* projected seconds of GPU events */
    int *kind;      /* kind of GPU events (enum mb_proj_kind), -1 for host events */
    int64_t *corr;  /* (correlation, event index) pairs of the step's launches */
    int64_t *tmp;
    int64_t *t2;    /* busy_by_class: the copies and collectives, 3 words a GPU event */
    size_t cap;
} step_work;

static int work_reserve(step_work *w, size_t need, mb_err *err)
{
    if (need <= w->cap)
        return MB_OK;
    size_t c = need + need / 2 + 16;
    mb_proj_event *ev = realloc(w->ev, c * sizeof *ev);
    if (ev)
        w->ev = ev;
    double *proj = realloc(w->proj, c * sizeof *proj);
    if (proj)
        w->proj = proj;
    int *kind = realloc(w->kind, c * sizeof *kind);
    if (kind)
        w->kind = kind;
    int64_t *corr = realloc(w->corr, c * 2 * sizeof *corr);
    if (corr)
        w->corr = corr;
    int64_t *tmp = realloc(w->tmp, c * REC_WORDS * sizeof *tmp); /* busy_by_class: REC_WORDS a GPU event */
    if (tmp)
        w->tmp = tmp;
    int64_t *t2 = realloc(w->t2, c * 3 * sizeof *t2);
    if (t2)
        w->t2 = t2;
    if (!ev || !proj || !kind || !corr || !tmp || !t2)
        return mb_errf(err, MB_ESYS, "out of memory");
    w->cap = c;
    return MB_OK;
}

static void work_free(step_work *w)
{
    free(w->ev);
    free(w->proj);
    free(w->kind);
    free(w->corr);
    free(w->tmp);
    free(w->t2);
}

/* The index of the step's launch event with correlation id corr, -1. */
static int launch_of(const step_work *w, int n_launch, int64_t corr)
{
    if (corr < 0)
        return -1;
    int lo = 0, hi = n_launch - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int64_t c = w->corr[2 * mid];
        if (c == corr)
            return (int)w->corr[2 * mid + 1];
        if (c < corr)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The first host call / GPU event at or after ts (both arrays are sorted
 * by start). */
static size_t first_host(const mb_proj_trace *t, int64_t ts)
{
    size_t lo = 0, hi = t->n_host;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->host[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t first_gpu(const mb_proj_trace *t, int64_t ts)
{
    size_t lo = 0, hi = t->n_gpu;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->gpu[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* GPU event g of a step from t0, on its lane; launch: its launch's index
 * among the step's events, -1 (then the launch's end, when recorded). */
static mb_proj_event gpu_event(const pt_gpu *g, int64_t t0, int lane, int launch)
{
    bool known = launch < 0 && g->launch_end != INT64_MIN;
    return (mb_proj_event){ .kind = MB_PE_GPU, .lane = lane, .launch = launch, .launch_known = known,
                            .launch_end = known ? (double)(g->launch_end - t0) * 1e-9 : 0,
                            .start = (double)(g->ts - t0) * 1e-9, .end = (double)(g->ts + g->dur - t0) * 1e-9 };
}

/* The events of one step: its host calls, then the GPU events they launched
 * (or, without a recorded launch, that start in the step). */
static int gather_step(const mb_proj_trace *t, int64_t t0, int64_t t1, int64_t blocking_ns, const tr_rules *rules,
                       const mb_proj_gpu *here, const mb_proj_gpu *there, step_work *w, mb_proj_outcome *o,
                       int *n_out, int *n_lanes, mb_err *err)
{
    if (work_reserve(w, t->n_gpu + t->n_host + 1, err))
        return err->code;
    lane_map threads = { .n = 0 }, streams = { .n = 0 };
    int n = 0, n_launch = 0;
    for (size_t i = first_host(t, t0); i < t->n_host && t->host[i].ts < t1; i++) {
        const pt_host *h = &t->host[i];
        w->ev[n] = (mb_proj_event){ .kind = h->kind, .lane = lane_of(&threads, h->thread), .launch = -1,
                                    .start = (double)(h->ts - t0) * 1e-9,
                                    .end = (double)(h->ts + h->dur - t0) * 1e-9,
                                    .blocking = h->kind == MB_PE_LAUNCH && h->dur > blocking_ns };
        w->kind[n] = -1;
        if (h->kind == MB_PE_LAUNCH && h->corr >= 0) {
            w->corr[2 * n_launch] = h->corr;
            w->corr[2 * n_launch + 1] = n;
            n_launch++;
        }
        n++;
    }
    sort(w->corr, (size_t)n_launch, 2 * sizeof *w->corr, cmp_i64);
    /* a kernel starts after its launch, so at t0 or later; one launched in
     * the step may start after it ends, behind queued work: kernels up to
     * one step length past the end are looked at */
    int64_t horizon = t1 + (t1 - t0);
    for (size_t i = first_gpu(t, t0); i < t->n_gpu && t->gpu[i].ts < horizon; i++) {
        const pt_gpu *g = &t->gpu[i];
        int launch = launch_of(w, n_launch, g->corr);
        if (launch < 0 && (g->ts < t0 || g->ts >= t1))
            continue;
        w->proj[n] = project_gpu(g, is_tensor_kernel(g, rules), here, there, o);
        w->kind[n] = kind_of(g, rules);
        w->ev[n] = gpu_event(g, t0, lane_of(&streams, g->stream), launch);
        n++;
    }
    *n_out = n;
    *n_lanes = threads.n > streams.n ? threads.n : streams.n;
    if (*n_lanes < 1)
        *n_lanes = 1;
    return MB_OK;
}

/* The GPU events of step k cut on the GPU's timeline: those its host code
 * launched, and those no recorded call launched that start in its window;
 * times from the window's start. No host events: the host ran ahead, so a
 * kernel waits only for the one before it on its stream (launch -1), and the
 * step ends when its GPU work does (the host's own time bounds it apart). */
static int gather_gpu_step(const mb_proj_trace *t, size_t k, const tr_rules *rules, const mb_proj_gpu *here,
                           const mb_proj_gpu *there, step_work *w, mb_proj_outcome *o, int *n_out, int *n_lanes,
                           mb_err *err)
{
    if (work_reserve(w, t->n_gpu + 1, err))
        return err->code;
    lane_map streams = { .n = 0 };
    int64_t t0 = t->tl.win[2 * k], t1 = t->tl.win[2 * k + 1];
    int64_t from = t->steps[2 * k] < t0 ? t->steps[2 * k] : t0; /* no kernel starts before its launch */
    int n = 0;
    for (size_t i = first_gpu(t, from); i < t->n_gpu && t->gpu[i].ts < t1; i++) {
        const pt_gpu *g = &t->gpu[i];
        if (g->step != (int)k && (g->step >= 0 || g->ts < t0))
            continue;
        w->proj[n] = project_gpu(g, is_tensor_kernel(g, rules), here, there, o);
        w->kind[n] = kind_of(g, rules);
        w->ev[n] = gpu_event(g, t0, lane_of(&streams, g->stream), -1);
        n++;
    }
    *n_out = n;
    *n_lanes = streams.n > 0 ? streams.n : 1;
    return MB_OK;
}

/* A step can take no less than the host's own time for it: where the
 * re-laid GPU steps are shorter (a faster GPU waiting for a host that ran
 * ahead here), the difference is host time. */
static void host_floor(mb_proj_step_split *sp, double host_seconds)
{
    if (host_seconds <= sp->step)
        return;
    sp->cls[MB_PC_HOST] += host_seconds - sp->step;
    sp->step = host_seconds;
}

/* Re-lays the step with the GPU durations `measured` (true: as here) or
 * projected, and adds its split to sp. */
static int relay_step(step_work *w, int n, int n_lanes, double step, bool measured, double host_scale,
                      mb_proj_step_split *sp, mb_err *err)
{
    double cls[MB_PC_N] = { 0 }, end;
    for (int i = 0; i < n; i++)
        if (w->ev[i].kind == MB_PE_GPU) {
            w->ev[i].new_seconds = measured ? w->ev[i].end - w->ev[i].start : w->proj[i];
            sp->kernel[w->kind[i]] += w->ev[i].new_seconds;
        }
    if (mb_proj_relay(w->ev, n, n_lanes, step, host_scale, &end, err))
        return err->code;
    split_step(sp, end, busy_by_class(w->ev, w->kind, n, w->tmp, w->t2, cls), cls);
    return MB_OK;
}

/* A launch call longer than this waited for room in the launch queue (the
 * GPU is behind): 10x the trace's median launch, at least 50 us. */
static int64_t blocking_launch_ns(const mb_proj_trace *t)
{
    size_t n = 0;
    int64_t *d = malloc((t->n_host + 1) * sizeof *d);
    if (d == NULL)
        return INT64_MAX; /* no launch counts as blocking: the plain model */
    for (size_t i = 0; i < t->n_host; i++)
        if (t->host[i].kind == MB_PE_LAUNCH)
            d[n++] = t->host[i].dur;
    sort(d, n, sizeof *d, cmp_i64);
    int64_t median = n ? d[n / 2] : 0;
    free(d);
    return median * 10 > 50000 ? median * 10 : 50000;
}

int mb_proj_trace_run(const mb_proj_trace *t, const mb_proj_gpu *here, const mb_proj_gpu *there, double host_scale,
                      mb_proj_outcome *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    tr_rules rules;
    memset(&rules, 0, sizeof rules);
    step_work w = { 0 };
    int rc = mb_tr_rules_load(&rules, NULL, err);
    if (rc)
        return rc;
    mb_proj_gpu here_adj = *here;
    if (here_adj.max_threads_per_sm == 0)
        here_adj.max_threads_per_sm = t->max_threads_per_sm;
    /* no steps: the trace's whole span is one */
    int64_t whole[2] = { INT64_MAX, INT64_MIN };
    for (size_t i = 0; i < t->n_gpu; i++) {
        whole[0] = t->gpu[i].ts < whole[0] ? t->gpu[i].ts : whole[0];
        whole[1] = t->gpu[i].ts + t->gpu[i].dur > whole[1] ? t->gpu[i].ts + t->gpu[i].dur : whole[1];
    }
    for (size_t i = 0; i < t->n_host; i++) {
        whole[0] = t->host[i].ts < whole[0] ? t->host[i].ts : whole[0];
        whole[1] = t->host[i].ts + t->host[i].dur > whole[1] ? t->host[i].ts + t->host[i].dur : whole[1];
    }
    whole[1]++;
    int64_t blocking_ns = blocking_launch_ns(t);
    const int64_t *steps = t->n_steps > 0 ? t->steps : whole;
    int n_steps = t->n_steps > 0 ? (int)t->n_steps : 1;
    double host_s = 0;
    for (int s = 0; s < n_steps && rc == MB_OK; s++) {
        int n = 0, n_lanes = 1;
        int64_t t0 = t->tl.gpu ? t->tl.win[2 * s] : steps[2 * s], t1 = t->tl.gpu ? t->tl.win[2 * s + 1] : steps[2 * s + 1];
        double step = (double)(t1 - t0) * 1e-9;
        if (t->tl.gpu) {
            rc = gather_gpu_step(t, (size_t)s, &rules, &here_adj, there ? there : &here_adj, &w, out, &n, &n_lanes,
                                 err);
            host_s += (double)t->host_ns[s] * 1e-9 * host_scale;
        } else
            rc = gather_step(t, t0, t1, blocking_ns, &rules, &here_adj, there ? there : &here_adj, &w, out, &n,
                             &n_lanes, err);
        if (rc == MB_OK)
            rc = relay_step(&w, n, n_lanes, step, true, host_scale, &out->here, err);
        if (rc == MB_OK)
            rc = relay_step(&w, n, n_lanes, step, there == NULL, host_scale, &out->there, err);
    }
    if (t->tl.gpu) {
        double here = out->here.step, there = out->there.step;
        host_floor(&out->here, host_s);
        host_floor(&out->there, host_s);
        out->gpu_timeline = true;
        out->host_step = host_s / n_steps;
        out->host_wait_here = (out->here.step - here) / n_steps;
        out->host_wait_there = (out->there.step - there) / n_steps;
    }
    out->steps = n_steps;
    for (int side = 0; side < 2; side++) {
        mb_proj_step_split *sp = side ? &out->there : &out->here;
        sp->step /= n_steps;
        sp->gpu_busy /= n_steps;
        for (int c = 0; c < MB_PC_N; c++)
            sp->cls[c] /= n_steps;
        for (int k = 0; k < MB_PK_N; k++)
            sp->kernel[k] /= n_steps;
    }
    work_free(&w);
    mb_tr_rules_free(&rules);
    return rc;
}

int mb_proj_trace_calibrate(const mb_proj_trace *t, const mb_proj_gpu *here, double step_seconds, double *host_scale,
                            double *trace_seconds, double *floor_seconds, mb_err *err)
{
    mb_proj_outcome o;
    int rc = mb_proj_trace_run(t, here, NULL, 1, &o, err);
    *host_scale = 1;
    *trace_seconds = o.here.step;
    *floor_seconds = 0;
    if (rc || step_seconds >= o.here.step)
        return rc;
    if ((rc = mb_proj_trace_run(t, here, NULL, 0, &o, err)) != MB_OK)
        return rc;
    *floor_seconds = o.here.step;
    *host_scale = 0;
    if (step_seconds <= o.here.step)
        return MB_OK;
    double lo = 0, hi = 1; /* the step at lo is below step_seconds, at hi above */
    while (rc == MB_OK && hi - lo > 1e-6) {
        double mid = 0.5 * (lo + hi);
        rc = mb_proj_trace_run(t, here, NULL, mid, &o, err);
        if (rc == MB_OK && fabs(o.here.step - step_seconds) <= 1e-4 * step_seconds) {
            lo = hi = mid;
            break;
        }
        if (o.here.step < step_seconds)
            lo = mid;
        else
            hi = mid;
    }
    *host_scale = 0.5 * (lo + hi);
    return rc;
}
