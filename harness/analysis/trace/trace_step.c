/* trace_step.c: a trace's step set to the loop's own step, timed without the
 * profiler (`mlbench gap --step-ms`; stages.h, mb_trace_set_step).
 *
 * A trace recorded with record_shapes=True costs the host time on every op;
 * the kernels, timed by the GPU, keep theirs. A loop that keeps its GPU busy
 * can so look host-bound in its trace. Given the real step S, the step table
 * (evidence "step") and the stages' exposed time are set to it, so the
 * headline, the diagnosis and every view read one step:
 *   - S between the GPU's time B (its busy time and its own gaps between
 *     queued kernels, the kernel wait: neither is the host's) and the
 *     traced step T: the GPU idle parts the host explains (host code,
 *     launch, sync, data) shrink by (S - B) / (T - B);
 *   - S below B (the kernels ran slower under the profiler): the GPU parts
 *     scale by S / B and nothing is idle; below B / 2 it is not this loop's
 *     step, refused (as the projection refuses it);
 *   - S above T: the difference is host time the trace does not show, added
 *     to "host code (GPU idle)". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "stages.h"

/* A stage whose exposed time is GPU idle time (the host in launches, syncs,
 * the DataLoader or its own code), as the trace reader makes them. */
static bool idle_stage(const mb_stage *s)
{
    return strcmp(s->component, "launch") == 0 || strcmp(s->component, "sync") == 0 ||
           (s->role && strcmp(s->role, "data") == 0) || (s->device && strcmp(s->device, "cpu") == 0);
}

static bool is_host_code(const mb_stage *s)
{
    return strcmp(s->name, MB_HOST_CODE_STAGE) == 0;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void set_num(cJSON *o, const char *key, double v)
{
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, cJSON_CreateNumber(v));
    else
        cJSON_AddNumberToObject(o, key, v);
}

/* A step figure of kernels (step.layout_conversions, fp32_math,
 * small_grids: their time per step and its share) in the step given: their
 * time scaled as the GPU's busy parts, their share of the new step. */
static void scale_kernel_figure(cJSON *step, const char *key, double gpu_f, double s)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(step, key);
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(o, "seconds");
    if (!cJSON_IsNumber(secs))
        return;
    double v = secs->valuedouble * gpu_f;
    set_num(o, "seconds", v);
    set_num(o, "share", v / s);
}

/* The GPU's own gaps between queued kernels: idle, but not the host's. */
static bool is_kernel_wait(const cJSON *part)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(part, "id");
    return cJSON_IsString(id) && strcmp(id->valuestring, "queued") == 0;
}

/* The step table's parts, per step, times their factor (the kernel wait
 * the GPU's); the host part gains `extra`. Shares over the new step. */
static void scale_parts(cJSON *step, double gpu, double idle, double extra, double s)
{
    cJSON *p;
    bool host = false;
    cJSON *parts = cJSON_GetObjectItemCaseSensitive(step, "parts");
    cJSON_ArrayForEach(p, parts)
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(p, "kind");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "id");
        bool is_idle = cJSON_IsString(kind) && strcmp(kind->valuestring, "idle") == 0 && !is_kernel_wait(p);
        bool is_host = cJSON_IsString(id) && strcmp(id->valuestring, "host") == 0;
        double v = num(p, "seconds") * (is_idle ? idle : gpu) + (is_host ? extra : 0);
        host |= is_host;
        set_num(p, "seconds", v);
        set_num(p, "share", v / s);
    }
    if (!host && extra > 0) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", "host");
        cJSON_AddStringToObject(o, "name", "other host code (framework, Python)");
        cJSON_AddStringToObject(o, "kind", "idle");
        cJSON_AddStringToObject(o, "class", "host");
        cJSON_AddNumberToObject(o, "seconds", extra);
        cJSON_AddNumberToObject(o, "share", extra / s);
        cJSON_AddItemToArray(parts, o);
    }
}

int mb_trace_set_step(mb_run *run, double s, mb_err *err)
{
    cJSON *step = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, "step") : NULL;
    const cJSON *where = cJSON_GetObjectItemCaseSensitive(step, "where");
    double t = num(step, "seconds"), busy = num(step, "gpu_busy_share") * t, wait = 0;
    int n = run->steps > 0 ? run->steps : 1;
    const cJSON *part;
    cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(step, "parts"))
        if (is_kernel_wait(part) && num(part, "seconds") > 0)
            wait += num(part, "seconds");
    /* A CPU-only trace: every part of its step is the host's, and the profiler's own time per op lies inside the
     * ops and the Python between them alike; no split of the difference would be measured. */
    if (cJSON_IsString(where) && strcmp(where->valuestring, "cpu") == 0 && !(num(step, "gpus_unrecorded") > 0))
        return mb_errf(err, MB_EUSAGE, "--step-ms: %s is a CPU-only trace: each part of its step is the host's, and "
                                       "the profiler's own time lies in its ops and in the Python between them "
                                       "alike, which the trace cannot tell apart, so no part is rescaled; the "
                                       "loop's stages timed without the profiler: python3 -m mlbench.simplify",
                       run->path ? run->path : "the run");
    if (cJSON_IsString(where) && strcmp(where->valuestring, "cpu") == 0)
        return mb_errf(err, MB_EUSAGE, "--step-ms: %s recorded no GPU activity though its run used a GPU: no GPU step "
                                       "table to set; profile again with ProfilerActivity.CUDA (torch.profiler's "
                                       "default)",
                       run->path ? run->path : "the run");
    if (!cJSON_IsObject(step) || cJSON_IsString(where) || !(t > 0) || busy < 0)
        return mb_errf(err, MB_EUSAGE, "--step-ms: %s has no GPU step table to set (a PyTorch trace with GPU "
                                       "events; a stage file gives its own times)",
                       run->path ? run->path : "the run");
    char ts[32], bs[32], ss[32];
    mb_fmt_seconds(ts, sizeof ts, t);
    mb_fmt_seconds(bs, sizeof bs, busy);
    mb_fmt_seconds(ss, sizeof ss, s);
    if (s < busy / 2)
        return mb_errf(err, MB_EUSAGE, "--step-ms: %s is less than half of the GPU's busy time per traced step (%s): "
                                       "not this loop's step",
                       ss, bs);
    double gpu = busy + wait, idle = t - gpu; /* the GPU's time: its kernels and its own gaps between them */
    double gpu_f = s < gpu ? s / gpu : 1;
    double idle_f = s >= t ? 1 : s <= gpu || idle <= 0 ? 0 : (s - gpu) / idle;
    /* the GPU's time kept: its busy time, and its own gaps between queued kernels when there are any */
    char gs[160];
    if (wait > 0) {
        char all[32], ws[32];
        mb_fmt_seconds(all, sizeof all, gpu);
        mb_fmt_seconds(ws, sizeof ws, wait);
        snprintf(gs, sizeof gs, "the GPU's time (%s: busy %s, kernel wait %s)", all, bs, ws);
    } else
        snprintf(gs, sizeof gs, "its busy time (%s)", bs);
    double extra = s > t ? s - t : 0;
    bool host_code = false;
    for (int i = 0; i < run->n_stages; i++) {
        mb_stage *st = &run->stages[i];
        double f = idle_stage(st) ? idle_f : gpu_f;
        if (is_host_code(st)) { /* its time is GPU idle time, all exposed */
            st->seconds = st->work = st->seconds * f + extra * n;
            st->has_exposed = false;
            host_code = true;
            continue;
        }
        st->exposed_seconds = mb_stage_exposed(st) * f;
        st->has_exposed = true;
    }
    if (!host_code && extra > 0) {
        mb_stage h = { .name = MB_HOST_CODE_STAGE, .component = "other", .device = "cpu", .work = extra * n,
                       .work_unit = "s", .seconds = extra * n,
                       .source = "--step-ms: the loop's step is longer than the trace's; the difference is host time" };
        if (mb_run_add_stage(run, &h, err))
            return err->code;
    }
    scale_parts(step, gpu_f, idle_f, extra, s);
    static const char *const kernel_figures[] = { "layout_conversions", "fp32_math", "small_grids" };
    for (size_t i = 0; i < sizeof kernel_figures / sizeof *kernel_figures; i++)
        scale_kernel_figure(step, kernel_figures[i], gpu_f, s);
    double new_busy = busy * gpu_f;
    set_num(step, "trace_seconds", t);
    set_num(step, "seconds", s);
    set_num(step, "gpu_busy_share", new_busy / s);
    set_num(step, "gpu_idle_share", 1 - new_busy / s);
    cJSON_AddBoolToObject(step, "step_given", true);
    run->gpu_utilization = new_busy / s;
    run->step_seconds = s;
    run->total_seconds = s * n;
    char why[512];
    if (s >= t)
        snprintf(why, sizeof why, "--step-ms %s: the loop's step without the profiler, %s longer than the trace's "
                                  "(%s): counted as host code the trace does not show",
                 ss, extra > 0 ? "" : "not", ts);
    else if (s >= gpu)
        snprintf(why, sizeof why, "--step-ms %s: the loop's step without the profiler; the trace's step (%s) holds the "
                                  "profiler's own host time: the GPU's idle parts %sare scaled by %.3g to it, %s kept",
                 ss, ts, wait > 0 ? "the host explains " : "", idle_f, gs);
    else
        snprintf(why, sizeof why, "--step-ms %s: below %s per traced step (its kernels ran slower under the "
                                  "profiler): the GPU's parts are scaled by %.3g, nothing idle",
                 ss, wait > 0 ? gs : "the GPU's busy time", gpu_f);
    cJSON_AddStringToObject(step, "step_given_why", why);
    return MB_OK;
}
