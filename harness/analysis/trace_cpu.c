/* trace_cpu.c: the stages of a CPU-only training run from its trace.
 *
 * A trace without GPU events (Debian's python3-torch, built without Kineto,
 * or a CPU-only Kineto run) still records the host's ops: aten matmuls and
 * convolutions, the optimizer's record_function, DataLoader and collective
 * annotations, ProfilerStep windows. Each class's time inside the steps is
 * counted once, by priority (data loading, collective, optimizer, conv,
 * matmul, other aten ops), so the stages add up to the step; what no op
 * covers is the Python around them. Matmul/conv stages carry their FLOPs
 * when shapes were recorded and are matched to the CPU GEMM/conv ceilings. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "gap.h"
#include "grow.h"

static const char *const cpu_class_names[TR_CPU_N] = { "collective (host)", "optimizer", "conv (cpu)",
                                                        "gemm (cpu)", "other aten ops" };

/* Which class a host event belongs to, or -1. */
static int cpu_class(const tr_state *st, const char *name, size_t len)
{
    if (strncmp(name, "Optimizer.", 10) == 0)
        return TR_CPU_OPT; /* Optimizer.step#SGD.step, Optimizer.zero_grad#SGD.zero_grad */
    if (tr_classify(st->rules, TR_SET_ANNOTATION, name, len) == TR_ANN_COLLECTIVE)
        return TR_CPU_COLL;
    int kind = tr_op_kind(name);
    if (kind == TR_OP_CONV)
        return TR_CPU_CONV;
    if (kind == TR_OP_GEMM)
        return TR_CPU_GEMM;
    if (strncmp(name, "aten::", 6) == 0 || strncmp(name, "mkldnn", 6) == 0)
        return TR_CPU_OPS;
    return -1;
}

static size_t merge(int64_t *iv, size_t n);

bool tr_cpu_fold(tr_state *st, const char *name, size_t len, int64_t ts, int64_t dur)
{
    /* Only a run without GPU events uses these (tr_cpu_stages): once one is
     * seen, the reader's memory stays per GPU event, not per host op. */
    if (st->n_devices > 0) {
        for (int k = 0; k < TR_CPU_N; k++) {
            free(st->cpu_iv[k].iv);
            st->cpu_iv[k] = (tr_ivlist){ 0 };
        }
        return true;
    }
    int c = cpu_class(st, name, len);
    if (c < 0)
        return true;
    tr_ivlist *l = &st->cpu_iv[c];
    st->cpu_count[c]++;
    /* nested or back-to-back ops of a class (linear -> addmm) extend the last interval */
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
    return tr_merge_intervals(iv, n);
}

/* Length of the intersection of two merged lists. */
static int64_t overlap(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    return tr_intersection(a, na, b, nb);
}

/* ---- FLOPs of leaf matmul/conv ops ------------------------------------------ */

/* FLOPs of the innermost ops of `kind` (linear -> addmm counts once) and
 * their dtype when they agree; false when no op of that kind had shapes. */
static bool leaf_flops(tr_state *st, int kind, double *flops, const char **dtype)
{
    *flops = 0;
    *dtype = NULL;
    if (st->n_flop_ops == 0)
        return false;
    tr_sort_flop_ops(st);
    int dt = -1;
    long long leaves = 0;
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        const tr_flop_op *op = &st->flop_ops[i];
        if (op->kind != kind)
            continue;
        size_t k = i + 1;
        while (k < st->n_flop_ops && st->flop_ops[k].kind != kind)
            k++;
        const tr_flop_op *next = k < st->n_flop_ops ? &st->flop_ops[k] : NULL;
        if (next && next->thread == op->thread && next->start < op->end)
            continue; /* encloses the next one: not a leaf */
        *flops += op->flops;
        leaves++;
        dt = dt == -1 ? op->dtype : (dt == op->dtype ? dt : 0);
    }
    if (dt > 0)
        *dtype = tr_dtype_name(dt);
    return leaves > 0 && *flops > 0;
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

static int cpu_stage(mb_run *run, const char *name, const char *comp, const char *dtype, double flops,
                     int64_t ns, long long count, const char *source, mb_err *err)
{
    double secs = (double)ns / 1e9;
    mb_stage s = { .name = (char *)name, .component = (char *)comp, .dtype = (char *)dtype,
                   .device = "cpu", .work = flops > 0 ? flops : secs, .work_unit = flops > 0 ? "flop" : "s",
                   .seconds = secs, .count = count, .source = (char *)source };
    return mb_run_add_stage(run, &s, err);
}

int tr_cpu_stages(tr_state *st, mb_run *run, cJSON *ev, mb_err *err)
{
    /* The windows: ProfilerSteps, else the whole trace. */
    size_t nw = st->n_steps > 0 ? st->n_steps : 1;
    int64_t *win = malloc(2 * nw * sizeof *win);
    int64_t *cover = NULL;
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
    size_t total = 0;
    for (int k = 0; k <= TR_CPU_N; k++)
        total += lists[k]->n;
    cover = malloc((2 * total + 2) * sizeof *cover);
    if (cover == NULL || wall <= 0) {
        rc = cover == NULL ? mb_errf(err, MB_ESYS, "out of memory") : MB_OK;
        goto done;
    }
    int64_t excl[1 + TR_CPU_N], covered = 0;
    size_t nc = 0;
    for (int k = 0; k <= TR_CPU_N; k++) {
        memcpy(cover + 2 * nc, lists[k]->iv, 2 * lists[k]->n * sizeof *cover);
        nc = merge(cover, nc + lists[k]->n);
        int64_t now = overlap(cover, nc, win, nw);
        excl[k] = now - covered;
        covered = now;
    }
    double per = (double)(st->n_steps > 0 ? st->n_steps : 1);
    cJSON_DeleteItemFromObjectCaseSensitive(ev, "step"); /* null: no GPU to split a step by */
    cJSON *step = cJSON_AddObjectToObject(ev, "step");
    cJSON_AddStringToObject(step, "window", st->n_steps > 0 ? "ProfilerStep" : "trace");
    cJSON_AddNumberToObject(step, "steps", per);
    cJSON_AddNumberToObject(step, "seconds", (double)wall / 1e9 / per);
    cJSON_AddNullToObject(step, "device");
    cJSON_AddStringToObject(step, "where", "cpu");
    cJSON *parts = cJSON_AddArrayToObject(step, "parts");
    static const char *const ids[1 + TR_CPU_N] = { "data", "collective", "optimizer", "conv", "gemm", "ops" };
    char source[160];
    for (int k = 0; k <= TR_CPU_N && rc == MB_OK; k++) {
        if (excl[k] <= 0)
            continue;
        const char *name = k == 0 ? "data loading" : cpu_class_names[k - 1];
        part_json(parts, ids[k], name, k == 0 ? "dataloader" : ids[k], excl[k], per, wall);
        if (k == 0)
            continue; /* the dataloading stage comes from the annotations (host_stages) */
        int c = k - 1;
        double flops = 0;
        const char *dtype = NULL;
        const char *comp = "other";
        if (c == TR_CPU_CONV || c == TR_CPU_GEMM) {
            comp = c == TR_CPU_CONV ? "conv" : "gemm";
            if (!leaf_flops(st, c == TR_CPU_CONV ? TR_OP_CONV : TR_OP_GEMM, &flops, &dtype))
                flops = 0;
        }
        snprintf(source, sizeof source, "trace: %lld CPU %s events within the %s, each instant counted once%s",
                 st->cpu_count[c], ids[k], st->n_steps ? "ProfilerSteps" : "trace",
                 flops > 0 ? "; FLOPs of the innermost ops with recorded shapes" : "");
        rc = cpu_stage(run, name, comp, dtype, flops, excl[k], st->cpu_count[c], source, err);
    }
    int64_t python = wall - covered;
    if (rc == MB_OK && python > 0) {
        part_json(parts, "python", "Python and other host code", "host", python, per, wall);
        snprintf(source, sizeof source, "trace: time within the %s in no op or annotation",
                 st->n_steps ? "ProfilerSteps" : "trace");
        rc = cpu_stage(run, "python (host code)", "other", NULL, 0, python, 0, source, err);
    }
    if (rc == MB_OK && st->n_steps > 0)
        run->total_seconds = (double)wall / 1e9; /* the stages cover the steps */
done:
    free(win);
    free(cover);
    return rc;
}
