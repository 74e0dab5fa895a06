/* diagnose.c: recognising the seed method's patterns in a gap. */
#include "diagnose.h"

#include "format.h"
#include "formulas.h"
#include "vocabulary.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- figures from the stages ------------------------------------------------- */

static bool name_has_any(const char *name, const char *list)
{
    if (list == NULL)
        return false;
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save))
        if (strcasestr(name, w))
            return true;
    return false;
}

static bool role_is(const mb_stage *s, const char *role)
{
    return s->role && strcmp(s->role, role) == 0;
}

/* A collective, on the GPU or the host, or a stage whose role says it communicates. */
static bool comm_stage(const mb_stage *s)
{
    return mb_is_collective(s->component) || role_is(s, "communication");
}

/* Work outside the training step proper: saving state, evaluating, logging. */
static bool is_periodic(const mb_stage *s)
{
    return role_is(s, "checkpoint") || role_is(s, "eval") || role_is(s, "logging");
}

/* A stage with no role whose component does not say what it is for, taken
 * as data loading because of its name alone: a hint, said in a note. */
static bool data_by_name(const mb_stage *s, const char *data_names)
{
    const char *c = s->component;
    return s->role == NULL && (strcmp(c, "other") == 0 || strcmp(c, "hostmem") == 0) &&
           name_has_any(s->name, data_names);
}

/* Data loading is decided by the role, else the component (a disk stage in
 * the loop reads input); the name only hints, for 'other'/'hostmem'. */
static bool is_data_stage(const mb_stage *s, const char *data_names)
{
    if (s->role)
        return role_is(s, "data");
    return strcmp(s->component, "disk") == 0 || data_by_name(s, data_names);
}

static const cJSON *ev_at(const cJSON *o, const char *path);

static double ev_num(const cJSON *o, const char *path);

/* What the set-up calls were, by name (host.setup.calls): the graph captures' time, and the device
 * allocations and frees (cudaMalloc/hipMalloc, cudaFree/hipFree, their Async forms). */
static void setup_kinds(const cJSON *ev, mb_diag_figures *f)
{
    const cJSON *calls = ev_at(ev, "host.setup.calls"), *c;
    double all = 0;
    f->setup_capture_s = f->setup_profiler_s = 0;
    f->setup_mallocs = f->setup_frees = 0;
    cJSON_ArrayForEach(c, calls)
    {
        double s = ev_num(c, "seconds"), n = ev_num(c, "count");
        all += s > 0 ? s : 0;
        if (strncmp(c->string, "graph capture", 13) == 0)
            f->setup_capture_s += s > 0 ? s : 0;
        if (strncmp(c->string, "Activity Buffer", 15) == 0) /* CUPTI's own buffers: the profiler's cost */
            f->setup_profiler_s += s > 0 ? s : 0;
        const char *api = strncmp(c->string, "cuda", 4) == 0 || strncmp(c->string, "hip", 3) == 0
                              ? c->string + (c->string[0] == 'c' ? 4 : 3) : "";
        if (n > 0 && (strncmp(api, "Malloc", 6) == 0) && strncmp(api, "MallocHost", 10) != 0)
            f->setup_mallocs += n;
        if (n > 0 && (strcmp(api, "Free") == 0 || strcmp(api, "FreeAsync") == 0))
            f->setup_frees += n;
    }
    f->setup_calls_s = all;
}

/* The GEMM/conv kernels' own names say their math (sm90_xmma_gemm_bf16bf16..., fp8 grouped GEMMs): a trace
 * without recorded types still tells a run in bf16 or fp8 from one in fp32. */
static void lowp_from_kernel_names(const cJSON *ev, mb_diag_figures *f)
{
    const cJSON *mm = ev_at(ev, "trace.matmul_math_seconds");
    if (!cJSON_IsObject(mm))
        return;
    double all = 0, lowp = 0, fp8 = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, mm)
    {
        double v = cJSON_IsNumber(m) && m->valuedouble > 0 ? m->valuedouble : 0;
        all += v;
        bool low = !strcmp(m->string, "fp16") || !strcmp(m->string, "bf16") || !strcmp(m->string, "fp8") ||
                   !strcmp(m->string, "int8");
        lowp += low ? v : 0;
        fp8 += !strcmp(m->string, "fp8") ? v : 0;
    }
    if (!(all > 0))
        return;
    f->lowp_share = fmax(f->lowp_share, lowp / all);
    f->fp8_compute |= fp8 >= 0.5 * all;
}

static void figures_from_stages(const mb_gap *g, const mb_ini *t, mb_diag_figures *f)
{
    const char *data_names = mb_ini_get(t, "data_loading_bound", "names");
    double eff_time = 0, eff_sum = 0;
    double compute = 0, launch = 0, sync = 0, data = 0, copy = 0, pageable = 0, pinned = 0, comm = 0, cpu = 0, queued = 0;
    double cpu_matmul = 0, cpu_memory = 0, cpu_other_ops = 0, cpu_optimizer = 0;
    double mm_all = 0, mm_fp32 = 0, mm_tf32 = 0, mm_fp8 = 0, mm_lowp = 0; /* GPU matmul stages by their types */
    bool gpu_work = false;
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        const char *c = s->component;
        bool on_cpu = s->device && strcmp(s->device, "cpu") == 0;
        gpu_work |= mb_stage_gpu_work(s);
        double secs = mb_stage_exposed(s); /* only exposed time explains the run */
        /* a name only classifies stages without a specific component: an
         * "upload" copy stays a copy */
        bool is_data = is_data_stage(s, data_names);
        if (is_periodic(s)) {
            f->periodic_share += secs / f->wall;
        } else if (is_data) {
            data += secs;
            if (s->pattern && strcmp(s->pattern, "random") == 0)
                f->random_disk = true;
        } else if (comm_stage(s)) {
            comm += secs; /* a host (gloo, MPI) collective too: waiting for the others is not compute */
            /* FSDP/ZeRO gather parameters and scatter gradients; DDP all-reduces them: other remedies */
            if (strcmp(c, "allgather") == 0 || strcmp(c, "reducescatter") == 0)
                f->comm_sharded_s += secs;
            else if (strcmp(c, "allreduce") == 0)
                f->comm_allreduce_s += secs;
            /* their element type (NCCL's kernel names, record_param_comms' dtype): half-width already */
            if (strcmp(c, "allreduce") == 0 && s->dtype &&
                (!strcmp(s->dtype, "bf16") || !strcmp(s->dtype, "half") || !strcmp(s->dtype, "fp16")))
                f->comm_allreduce_lowp_s += secs;
        } else if ((strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0) && on_cpu) {
            cpu += secs;
            cpu_matmul += secs;
            f->cpu_matmul_unshaped |= strcmp(s->work_unit, "s") == 0 && secs > 0;
        } else if (strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0 || strcmp(c, "attention") == 0 ||
                   strcmp(c, "membw") == 0) {
            compute += secs;
            if (strcmp(c, "membw") != 0) {
                const char *dt = s->dtype ? s->dtype : "";
                mm_all += secs;
                mm_fp32 += strcmp(dt, "fp32") == 0 ? secs : 0;
                mm_tf32 += strcmp(dt, "tf32") == 0 ? secs : 0;
                mm_fp8 += strcmp(dt, "fp8") == 0 ? secs : 0;
                mm_lowp += strcmp(dt, "fp8") == 0 || strcmp(dt, "bf16") == 0 || strcmp(dt, "fp16") == 0 ||
                                   strcmp(dt, "int8") == 0 ? secs : 0;
            }
            if (mb_gap_stage_bounded(st)) {
                eff_time += secs;
                eff_sum += secs * st->efficiency;
            }
        } else if (strcmp(c, "launch") == 0) {
            launch += secs;
            f->launches += s->work;
        } else if (strcmp(c, "sync") == 0) {
            sync += secs;
            f->syncs += s->work;
        } else if (strcmp(c, "copy") == 0 && s->direction && strcmp(s->direction, "d2d") != 0) {
            copy += secs;
            if (s->memory && strcmp(s->memory, "pageable") == 0)
                pageable += secs;
            if (s->memory && strcmp(s->memory, "pinned") == 0)
                pinned += secs;
        } else if (on_cpu && (strcmp(c, "other") == 0 || strcmp(c, "hostmem") == 0)) {
            cpu += secs;
            if (strcmp(c, "hostmem") == 0)
                cpu_memory += secs;
            else if (role_is(s, "compute"))
                cpu_other_ops += secs;
            else if (role_is(s, "optimizer"))
                cpu_optimizer += secs;
        } else if (role_is(s, "overhead")) {
            queued += secs; /* the GPU's own gaps between queued kernels: not host, not unattributed */
        } else if (strcmp(c, "other") == 0) {
            f->unattributed_share += secs / f->wall;
        }
    }
    double w = f->wall;
    /* a precision remedy needs that precision to matter: an fp32 RMSNorm's 4 us of fp32 GEMM beside a bf16
     * Qwen's 8.9 ms read "Lower precision: bf16/fp16 autocast" */
    double fp32_min = 0.05;
    const char *fm = mb_ini_get(t, "gpu_compute_bound", "fp32_math_share_min");
    if (fm)
        fp32_min = strtod(fm, NULL);
    f->fp32_compute = mm_fp32 > 0 && mm_fp32 >= fp32_min * w;
    f->tf32_compute = mm_tf32 > 0 && mm_tf32 >= fp32_min * w;
    f->fp8_compute = mm_fp8 > 0 && mm_fp8 >= 0.5 * mm_all;
    f->lowp_share = mm_all > 0 ? mm_lowp / mm_all : -1;
    f->compute_share = compute / w;
    f->launch_share = launch / w;
    f->sync_share = sync / w;
    f->data_share = data / w;
    f->copy_share = copy / w;
    f->pageable_share = pageable / w;
    f->pinned_share = pinned / w;
    f->comm_share = comm / w;
    f->cpu_share = cpu / w;
    f->cpu_matmul_share = cpu_matmul / w;
    f->cpu_memory_share = cpu_memory / w;
    f->cpu_other_ops_share = cpu_other_ops / w;
    f->cpu_optimizer_share = cpu_optimizer / w;
    /* the optimizer's ops are no more host code than the model's (SparseAdam's add_, sparse_mask and coalesce,
     * 80% of a recommender's step, read "Python and the framework lead") */
    f->cpu_host_share = fmax(0, cpu - cpu_matmul - cpu_memory - cpu_other_ops - cpu_optimizer) / w;
    f->queued_share = queued / w; /* the step table's part, when there is one (figures_from_step) */
    f->compute_efficiency = eff_time > 0 ? eff_sum / eff_time : -1;
    /* A stage file whose work all ran on the CPU (simplify on a CPU loop) is
     * a run without a GPU, as a CPU-only trace is (the evidence says so for
     * a trace): its remedies are not "move the work to the GPU". */
    f->cpu_only = !gpu_work && cpu > 0;
}

/* ---- figures from a trace's evidence (docs/traces.md) -------------------------- */

/* The item at a dotted path of the evidence ("simplify.data_loading");
 * NULL when absent. */
static const cJSON *ev_at(const cJSON *o, const char *path)
{
    char copy[128], *save = NULL;
    snprintf(copy, sizeof copy, "%s", path);
    const cJSON *it = o;
    for (char *k = strtok_r(copy, ".", &save); k && it; k = strtok_r(NULL, ".", &save))
        it = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, k) : NULL;
    return it;
}

static const cJSON *ev_object(const cJSON *o, const char *path)
{
    const cJSON *it = ev_at(o, path);
    return cJSON_IsObject(it) ? it : NULL;
}


/* simplify's own figures (python/mlbench/simplify.py _cpu_threads): a count
 * that is not a whole number from 1 to 10^6 stays unknown. */
static int ev_count(const cJSON *o, const char *path)
{
    double v = ev_num(o, path);
    return v >= 1 && v <= 1e6 && v == floor(v) ? (int)v : -1;
}

static void threads_from_simplify(const cJSON *ev, mb_diag_figures *f)
{
    f->torch_threads = ev_count(ev, "simplify.torch_threads");
    f->host_ranks = ev_count(ev, "simplify.host_ranks");
    f->cpus_allowed = ev_count(ev, "simplify.cpus_allowed");
}

static void loader_from_simplify(const cJSON *ev, mb_diag_figures *f)
{
    const cJSON *dl = ev_object(ev, "simplify.data_loading");
    const cJSON *rem = dl ? cJSON_GetObjectItemCaseSensitive(dl, "remedies") : NULL;
    f->loader_remedies = cJSON_IsArray(rem) && cJSON_GetArraySize(rem) > 0;
    const cJSON *bound = dl ? cJSON_GetObjectItemCaseSensitive(dl, "bound") : NULL;
    f->loader_storage_bound = cJSON_IsString(bound) && strcmp(bound->valuestring, "storage") == 0;
    const cJSON *ds = ev_object(ev, "simplify.dataset");
    const cJSON *fits = ds ? cJSON_GetObjectItemCaseSensitive(ds, "fits_in_memory") : NULL;
    f->dataset_fits = cJSON_IsBool(fits) ? cJSON_IsTrue(fits) : -1;
}

/* simplify's full loop against its CPUs (python/mlbench/simplify.py
 * _cpu_floor): read when its processes keep them busy. */
static void cpus_from_simplify(const cJSON *ev, mb_diag_figures *f)
{
    const cJSON *c = ev_object(ev, "simplify.cpu");
    const cJSON *busy = c ? cJSON_GetObjectItemCaseSensitive(c, "busy") : NULL;
    const cJSON *shared = c ? cJSON_GetObjectItemCaseSensitive(c, "shared") : NULL;
    f->cpu_floor_s = -1;
    if (!cJSON_IsTrue(busy) && !cJSON_IsTrue(shared))
        return;
    f->cpu_cpus = ev_count(ev, "simplify.cpu.cpus");
    f->cpu_workers = ev_count(ev, "simplify.cpu.workers"); /* -1: none (a count is 1 or more) */
    f->cpu_step_s = ev_num(ev, "simplify.cpu.cpu_seconds_per_step");
    f->cpu_workers_s = ev_num(ev, "simplify.cpu.worker_cpu_seconds_per_step");
    f->cpu_main_s = ev_num(ev, "simplify.cpu.main_cpu_seconds_per_step");
    f->cpu_main_wait_s = ev_num(ev, "simplify.cpu.main_wait_seconds_per_step");
    f->cpu_busy_share = ev_num(ev, "simplify.cpu.busy_share");
    double floor_s = ev_num(ev, "simplify.cpu.floor_seconds_per_step");
    if (f->cpu_cpus < 1 || f->cpu_step_s <= 0 || f->cpu_workers_s < 0 || f->cpu_main_s < 0 || f->cpu_busy_share <= 0 ||
        floor_s <= 0)
        return;
    f->cpus_busy = true;
    f->cpus_shared = cJSON_IsTrue(shared) && f->cpu_workers >= 1;
    f->cpu_floor_s = floor_s;
}

/* Every CPU the run may use has a thread: torch's threads per rank times
 * the ranks on the machine reach its CPUs. Unknown (a trace): false. */
static bool cpus_all_busy(const mb_diag_figures *f)
{
    return f->torch_threads > 0 && f->cpus_allowed > 0 &&
           (double)f->torch_threads * (f->host_ranks > 0 ? f->host_ranks : 1) >= f->cpus_allowed;
}

/* A CPU-only run whose host time between its ops outweighs each kind of op. */
static bool cpu_python_leads(const mb_diag_figures *f)
{
    return f->cpu_only && f->gpus_unrecorded == 0 &&
           f->cpu_host_share > fmax(fmax(f->cpu_matmul_share, f->cpu_optimizer_share),
                                    fmax(f->cpu_memory_share, f->cpu_other_ops_share));
}

static double ev_num(const cJSON *o, const char *path)
{
    const cJSON *it = ev_at(o, path);
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble : -1;
}

/* A CPU-only step's Python (its part "python"), the longest stretch of it with no op and those of 1 ms or more
 * (trace_cpu.c): half of it or more in such blocks is no dispatch overhead (an RL loop's four 1.4-ms environment
 * steps, none half of its Python, read "fewer, larger ops ... torch.compile"). */
static void python_block(const cJSON *step, const mb_ini *t, mb_diag_figures *f)
{
    const char *min = mb_ini_get(t, "cpu_compute_bound", "python_block_share_min");
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(step, "parts"))
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "id"));
        if (id && strcmp(id, "python") == 0)
            f->cpu_python_s = ev_num(p, "seconds");
    }
    f->cpu_python_block_s = ev_num(step, "python_longest_seconds");
    f->cpu_python_long_s = ev_num(step, "python_long_seconds");
    f->cpu_python_long_n = ev_num(step, "python_long_stretches");
    double share = min ? strtod(min, NULL) : 0.5;
    f->cpu_python_one_block = f->cpu_python_s > 0 && f->cpu_python_block_s >= share * f->cpu_python_s;
    f->cpu_python_blocks = f->cpu_python_s > 0 && (f->cpu_python_one_block ||
                                                   f->cpu_python_long_s >= share * f->cpu_python_s);
    /* the loop's own range (record_function) that holds them: named, where it holds half of them or more */
    const char *range = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "python_long_range"));
    double range_s = ev_num(step, "python_long_range_seconds");
    if (f->cpu_python_blocks && range && range_s > 0 && range_s >= 0.5 * f->cpu_python_long_s) {
        f->cpu_python_range = range;
        f->cpu_python_range_s = range_s;
    }
    const char *emb = mb_ini_get(t, "cpu_compute_bound", "dense_embedding_share_min");
    f->cpu_dense_embedding_s = ev_num(step, "dense_embedding_grad_seconds");
    double step_s = ev_num(step, "seconds");
    f->cpu_dense_embedding_share = f->cpu_dense_embedding_s >= 0 && step_s > 0 ? f->cpu_dense_embedding_s / step_s
                                                                               : -1;
    f->cpu_dense_embedding = f->cpu_dense_embedding_share >= (emb ? strtod(emb, NULL) : 0.2);
}

static void figures_from_evidence(const cJSON *ev, mb_diag_figures *f)
{
    double busy = 0, window = 0, idle = 0, compute = 0, comm = 0, host_wait = 0;
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(ev, "devices");
    const cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        double b = ev_num(d, "busy_s"), wnd = ev_num(d, "window_s"), i = ev_num(d, "idle_s");
        if (b < 0 || wnd <= 0)
            continue;
        busy += b;
        window += wnd;
        idle += i > 0 ? i : 0;
        double hw = ev_num(d, "host_wait_idle_s");
        host_wait += hw > 0 ? hw : 0;
        double gm = ev_num(d, "classes.gemm.seconds"), cv = ev_num(d, "classes.conv.seconds");
        double nc = ev_num(d, "classes.nccl.seconds");
        compute += (gm > 0 ? gm : 0) + (cv > 0 ? cv : 0);
        comm += nc > 0 ? nc : 0;
    }
    double w = f->wall;
    if (window > 0) {
        f->gpu_util = busy / window;
        f->gpu_idle_share = idle / window;
        f->compute_share = compute / w;
        f->comm_share = comm / w;
    }
    /* the launch calls the steps' windows hold (older evidence: the whole trace's) */
    const char *lk = ev_at(ev, "host.in_steps.launch") ? "host.in_steps.launch" : "host.launch";
    char key[64];
    snprintf(key, sizeof key, "%s.seconds", lk);
    double ls = ev_num(ev, key);
    snprintf(key, sizeof key, "%s.count", lk);
    double lc = ev_num(ev, key);
    /* launch calls in set-up (10 ms or more, a kernel's first of 100 us or more: the "setup" part) are no
     * launch's cost */
    snprintf(key, sizeof key, "%s.long.seconds", lk);
    double lls = ev_num(ev, key);
    snprintf(key, sizeof key, "%s.long.count", lk);
    double llc = ev_num(ev, key);
    if (ls >= 0 && lls > 0 && llc > 0) {
        ls = fmax(0, ls - lls);
        lc = fmax(0, lc - llc);
    }
    /* deviceProperties' compute capability (the first GPU that gives one): which math its tensor cores run */
    const cJSON *prop;
    cJSON_ArrayForEach(prop, cJSON_GetObjectItemCaseSensitive(ev, "device_properties"))
    {
        double major = ev_num(prop, "computeMajor"), minor = ev_num(prop, "computeMinor");
        if (major >= 1 && major < 100) {
            f->compute_major = (int)major;
            f->compute_minor = minor >= 0 && minor < 100 ? (int)minor : -1;
            break;
        }
    }
    f->setup_steps = ev_num(ev, "host.setup.steps_with");
    setup_kinds(ev, f);
    f->optimizer_steps = ev_num(ev, "trace.optimizer_steps");
    f->compiled_regions = ev_num(ev, "trace.compiled_regions");
    f->fused_optimizer = ev_num(ev, "trace.fused_optimizer");
    f->foreach_optimizer = ev_num(ev, "trace.foreach_optimizer");
    f->graph_replays = ev_num(ev, "trace.graph_replays");
    lowp_from_kernel_names(ev, f);
    f->shapes_recorded = cJSON_IsTrue(ev_at(ev, "trace.shapes_recorded"));
    const char *form = cJSON_GetStringValue(ev_at(ev, "trace.form"));
    f->array_form = form && strcmp(form, "array") == 0;
    const char *api = cJSON_GetStringValue(ev_at(ev, "trace.runtime_api"));
    f->hip_runtime = api && strcmp(api, "hip") == 0;
    f->backward_ops = ev_num(ev, "trace.backward_ops");
    if (ls >= 0) {
        f->launch_share = ls / w;
        f->launches = lc > 0 ? lc : f->launches;
        f->launch_idle_ratio = idle > 0 ? ls / idle : -1;
    }
    double ss = ev_num(ev, "host.sync.seconds"), sc = ev_num(ev, "host.sync.count");
    double bs = ev_num(ev, "host.blocking_copy.seconds"), bc = ev_num(ev, "host.blocking_copy.count");
    if (ss >= 0 || bs >= 0) {
        /* Host time in syncs is only lost when the GPU sits idle meanwhile
         * (a sync that waits for busy kernels costs nothing): the GPU idle
         * time while the host waits, capped by the host's sync time (the
         * reader's host-wait also covers DataLoader waits). */
        double in_sync = (ss > 0 ? ss : 0) + (bs > 0 ? bs : 0);
        f->sync_host_share = in_sync / w;
        f->sync_host_s = in_sync;
        f->longest_wait_s = ev_num(ev, "host.in_steps.longest_wait_seconds");
        f->sync_share = (window > 0 ? fmin(in_sync, host_wait) : in_sync) / w;
        /* the calls the time above is in: syncs and blocking copies alike, as the sync stage counts them (a
         * decode trace read "5 syncs, 68.7 us each" for 345 us in 5 syncs and 4 pageable copies, the table
         * 38.1 us a call) */
        double calls = (sc > 0 ? sc : 0) + (bc > 0 ? bc : 0);
        /* the sync stage's count when there is one (figures_from_stages): the closing synchronize left out, as
         * its time is (HTA's 16-rank A100 trace read 151 for the stage's 150) */
        bool from_stage = f->syncs > 0;
        f->syncs = from_stage ? f->syncs : calls > 0 ? calls : f->syncs;
        /* of them copies, counted where the syncs were: the stage's in the steps (three .cpu() before the first
         * step read "3 syncs and blocking copies (3 of them copies)" for three syncs in the steps) */
        double in_bc = ev_num(ev, "host.in_steps.blocking_copy.count");
        f->blocking_copies = from_stage && in_bc >= 0 ? in_bc : bc > 0 ? bc : 0;
    }
    double dl = ev_num(ev, "host.dataloader.seconds"), dc = ev_num(ev, "host.dataloader.count");
    double dp = ev_num(ev, "host.dataloader.in_process");
    if (dl >= 0)
        f->data_share = dl / w;
    if (dc > 0 && dp >= 0)
        f->data_in_process = dp / dc;
    /* Host<->device copies come from the stages (figures_from_stages): the
     * copies in the steps, exposed. The evidence's "copies" are the whole
     * trace's (the device's evidence), outside the steps too: a pageable
     * share from them read 2.4% beside the steps' 1.9% of all copies
     * (kineto's tb_plugin ResNet-50). */
}

/* The trace's step table (docs/traces.md): every share is exposed time, so
 * a launch overlapping GPU work or a sync waiting on a busy GPU counts for
 * nothing here; the GPU's own work does. */
static void figures_from_step(const cJSON *step, mb_diag_figures *f)
{
    double by_id[16] = {0};
    static const char *const ids[] = {"gemm", "conv", "attention", "memory_bound", "copy", "collective",
                                      "data", "sync", "host_collective", "launch", "host", "queued", "setup"};
    enum { N_IDS = sizeof ids / sizeof ids[0] };
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(step, "parts"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "id");
        double share = ev_num(p, "share");
        for (int i = 0; i < N_IDS && cJSON_IsString(id) && share > 0; i++)
            if (strcmp(id->valuestring, ids[i]) == 0)
                by_id[i] += share;
    }
    f->step_table = true;
    f->tensor_share = by_id[0] + by_id[1] + by_id[2];
    f->gemm_share = by_id[0];
    f->conv_share = by_id[1];
    f->attention_share = by_id[2];
    f->memory_share = by_id[3];
    f->compute_share = f->tensor_share + f->memory_share;
    /* copy_share stays the stages' host<->device copies: the step table's
     * copy part holds device-to-device copies too */
    f->comm_share = by_id[5] + by_id[8];
    f->data_share = by_id[6];
    f->sync_share = by_id[7];
    f->launch_idle_share = by_id[9];
    f->host_idle_share = by_id[10];
    f->queued_share = by_id[11];
    f->setup_share = by_id[12];
    double busy = ev_num(step, "gpu_busy_share");
    if (busy >= 0) {
        f->gpu_util = busy;
        f->gpu_idle_share = 1 - busy;
    }
    f->kernels_per_step = ev_num(step, "kernels_per_step");
    f->median_kernel_s = ev_num(step, "median_kernel_seconds");
    f->layout_share = ev_num(step, "layout_conversions.share");
    f->fp32_math_share = ev_num(step, "fp32_math.share");
    f->fp32_math_s = ev_num(step, "fp32_math.seconds");
    f->fp32_math_kernels = ev_num(step, "fp32_math.kernels");
    f->small_grid_share = ev_num(step, "small_grids.share");
    f->small_grid_s = ev_num(step, "small_grids.seconds");
    f->small_grid_kernels = ev_num(step, "small_grids.kernels");
    f->sms = ev_num(step, "small_grids.sms");
    const cJSON *largest = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(step, "small_grids"),
                                                            "largest");
    f->small_grid_largest = cJSON_IsString(largest) ? largest->valuestring : NULL;
    f->small_grid_largest_s = ev_num(step, "small_grids.largest_seconds");
    f->layout_s = ev_num(step, "layout_conversions.seconds");
    f->layout_kernels = ev_num(step, "layout_conversions.kernels");
}

/* Launch ceiling and tensor-core efficiency from the matched stages. */
/* Whether the ceilings' CPU has native bf16, from the SIMD flags its results
 * list (cpu_info.c): 0 only for an x86 CPU that lists neither bf16 flag (an
 * Arm CPU's bf16 is not among the listed flags: unknown). */
static int ceilings_cpu_bf16(const mb_gap *g)
{
    const cJSON *ctx = g->ceilings ? g->ceilings->context : NULL;
    const cJSON *cpu = ctx ? cJSON_GetObjectItemCaseSensitive(ctx, "cpu") : NULL;
    const cJSON *flags = cpu ? cJSON_GetObjectItemCaseSensitive(cpu, "flags_simd") : NULL;
    if (!cJSON_IsArray(flags))
        return -1;
    bool x86 = false, bf16 = false;
    const cJSON *flag;
    cJSON_ArrayForEach(flag, flags)
    {
        const char *name = cJSON_GetStringValue(flag);
        if (name == NULL)
            continue;
        bf16 = bf16 || strcmp(name, "avx512_bf16") == 0 || strcmp(name, "amx_bf16") == 0;
        x86 = x86 || strcmp(name, "sse4_2") == 0 || strcmp(name, "avx") == 0;
    }
    return bf16 ? 1 : x86 ? 0 : -1;
}

static void figures_from_ceilings(const mb_gap *g, mb_diag_figures *f)
{
    double eff_time = 0, eff_sum = 0, flops = 0, bytes = 0;
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        if (strcmp(s->component, "gemm") == 0 || strcmp(s->component, "conv") == 0 ||
            strcmp(s->component, "attention") == 0)
            f->tensor_all_s += s->seconds; /* with FLOPs or time only, a ceiling or none */
        if (st->match < 0 || st->ceiling_rate <= 0)
            continue;
        if (strcmp(s->component, "launch") == 0 && strcmp(s->work_unit, "launch") == 0)
            f->launch_ceiling_s = 1 / st->ceiling_rate;
        bool matrix = (strcmp(s->component, "gemm") == 0 || strcmp(s->component, "conv") == 0 ||
                       strcmp(s->component, "attention") == 0) &&
                      strcmp(s->work_unit, "flop") == 0;
        if (matrix && mb_gap_stage_bounded(st)) {
            eff_time += s->seconds;
            eff_sum += s->seconds * st->efficiency;
        } else if (matrix) /* faster than its nearest case: no ceiling for it */
            f->tensor_beyond_s += s->seconds;
        if (matrix && st->by_bytes) {
            f->tensor_bytes_s += s->seconds;
            flops += s->work;
            bytes += s->min_bytes;
        }
    }
    f->tensor_efficiency = eff_time > 0 ? eff_sum / eff_time : -1;
    f->tensor_held_s = eff_time;
    f->tensor_intensity = bytes > 0 ? flops / bytes : -1;
    f->cpu_bf16 = ceilings_cpu_bf16(g);
}

/* The trace's memory-bound ops with recorded shapes against the membw
 * ceiling (the stage the reader names MB_MEMBOUND_STAGE). */
/* A case as the text names it: its label (the parameters its job file set,
 * as under "ceilings matched"), its id when it has none; a full id of a
 * GPU GEMM case is one unbreakable 160-column word. */
static const char *case_name(const mb_case_ref *c)
{
    return c->label[0] ? c->label : c->id;
}

static void figures_from_memory_stage(const mb_gap *g, mb_diag_figures *f)
{
    f->memory_rate = f->memory_ceiling = f->memory_bandwidth = f->memory_efficiency = f->memory_shaped_share = -1;
    f->memory_ceiling_case = f->memory_ceiling_label = NULL;
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        if (strcmp(s->name, MB_MEMBOUND_STAGE) != 0 || strcmp(s->component, "membw") != 0 ||
            strcmp(s->work_unit, "byte") != 0 || s->seconds <= 0)
            continue;
        f->memory_rate = s->work / s->seconds;
        if (mb_gap_stage_bounded(st) && st->ceiling_rate > 0) {
            f->memory_ceiling = st->ceiling_rate;
            f->memory_bandwidth = g->ceilings->cases[st->match].rate_abs;
            f->memory_efficiency = f->memory_rate / st->ceiling_rate;
            f->memory_ceiling_case = g->ceilings->cases[st->match].id;
            f->memory_ceiling_label = case_name(&g->ceilings->cases[st->match]);
        } else if (st->match >= 0) { /* faster than its case: what it beat, not "no ceiling measured" */
            f->memory_bandwidth = g->ceilings->cases[st->match].rate_abs;
            f->memory_ceiling_label = case_name(&g->ceilings->cases[st->match]);
        }
    }
}

/* The stages' own time (not exposed) of one component. */
static double component_seconds(const mb_gap *g, const char *component)
{
    double sum = 0;
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->stages[i].stage->component, component) == 0)
            sum += g->stages[i].stage->seconds;
    return sum;
}

/* The GPU-idle host time of a step per op the trace recorded in it: a host
 * that spends a few microseconds per op is dispatching them (framework,
 * Python, launches), whatever the kernels' length; one that spends far more
 * per op runs code of its own between them. */
static void host_time_per_op(const cJSON *ev, const cJSON *step, mb_diag_figures *f)
{
    double ops = ev_at(ev, "host.in_steps.ops") ? ev_num(ev, "host.in_steps.ops") : ev_num(ev, "host.ops");
    double n = ev_num(step, "steps"), t = ev_num(step, "seconds");
    if (f->kernels_per_step > 0 && t > 0)
        f->host_kernel_s = (f->launch_idle_share + f->host_idle_share) * t / f->kernels_per_step;
    if (ops > 0 && n > 0 && t > 0) {
        f->ops_per_step = ops / n;
        f->host_op_s = (f->launch_idle_share + f->host_idle_share) * t / f->ops_per_step;
    } else if (ops == 0)
        f->ops_per_step = 0; /* none recorded (ProfilerActivity.CPU off); host_op_s unknown */
    f->metadata_op_s = ev_num(ev, "host.metadata_ops.median_seconds");
    f->metadata_ops = ev_num(ev, "host.metadata_ops.count");
}

void mb_diag_figures_compute(const mb_gap *g, const mb_ini *t, mb_diag_figures *f)
{
    memset(f, 0, sizeof *f);
    f->source = "stages";
    f->span = g->steps_known ? "step" : "run";
    f->wall = g->total > 0 ? g->total : 1;
    f->steps = g->run->steps > 0 ? g->run->steps : 0;
    f->gpu_util = g->run->gpu_utilization;
    f->cpu_util = g->run->cpu_utilization;
    f->gpu_idle_share = f->gpu_util >= 0 ? 1 - f->gpu_util : -1;
    f->launch_idle_ratio = -1;
    f->sync_host_share = f->sync_host_s = f->longest_wait_s = -1;
    f->data_in_process = -1;
    f->cpu_python_s = f->cpu_python_block_s = f->cpu_python_long_s = f->cpu_python_long_n = -1;
    f->cpu_dense_embedding_s = f->cpu_dense_embedding_share = -1;
    f->setup_steps = -1;
    f->optimizer_steps = f->compiled_regions = f->backward_ops = -1;
    f->fused_optimizer = f->graph_replays = f->foreach_optimizer = -1;
    f->torch_threads = f->host_ranks = f->cpus_allowed = -1;
    f->cpu_floor_s = -1;
    f->dataset_fits = -1;
    figures_from_stages(g, t, f);
    f->kernels_per_step = -1;
    f->median_kernel_s = -1;
    f->layout_share = f->layout_s = f->layout_kernels = -1;
    f->fp32_math_share = f->fp32_math_s = f->fp32_math_kernels = -1;
    f->small_grid_share = f->small_grid_s = f->small_grid_kernels = f->sms = f->small_grid_largest_s = -1;
    f->compute_major = f->compute_minor = -1;
    f->host_op_s = f->ops_per_step = f->host_kernel_s = f->metadata_op_s = f->metadata_ops = -1;
    f->launch_ceiling_s = -1;
    figures_from_ceilings(g, f);
    figures_from_memory_stage(g, f);
    if (cJSON_IsObject(g->run->evidence)) {
        f->source = "stages + trace evidence";
        figures_from_evidence(g->run->evidence, f);
        threads_from_simplify(g->run->evidence, f);
        loader_from_simplify(g->run->evidence, f);
        cpus_from_simplify(g->run->evidence, f);
        double shaped = ev_num(g->run->evidence, "rates.memory_bound.shaped_share");
        if (shaped >= 0)
            f->memory_shaped_share = shaped;
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(g->run->evidence, "step");
        const cJSON *where = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "where") : NULL;
        /* A CPU-only trace's step table (trace_cpu.c) has no GPU shares: its
         * stages (device cpu) give the figures. */
        if (cJSON_IsString(where))
            f->cpu_only = strcmp(where->valuestring, "cpu") == 0;
        double listed = ev_num(step, "gpus_unrecorded");
        f->gpus_unrecorded = f->cpu_only && listed > 0 ? (int)listed : 0;
        if (f->cpu_only)
            python_block(step, t, f);
        if (cJSON_IsObject(step) && !f->cpu_only) {
            f->source = "the trace's step table";
            figures_from_step(step, f);
            host_time_per_op(g->run->evidence, step, f);
            /* the host's time in syncs is the steps' (the sync stages), not
             * the whole trace's: the profiler's closing synchronize and the
             * syncs before a step's first launch are no step's (TraceLens's
             * MI300X ResNet: 67% of the step from a 37.9 ms closing sync) */
            if (f->sync_host_share >= 0)
                f->sync_host_share = component_seconds(g, "sync") / f->wall;
        }
    }
}

/* ---- findings ---------------------------------------------------------------------- */

static void us_each(char *buf, size_t len, double seconds, double count);

typedef struct builder {
    mb_diagnosis *d;
    mb_finding *cur;
    bool oom;
} builder;

static void push_str(builder *b, char ***list, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void push_str(builder *b, char ***list, int *n, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **g = realloc(*list, sizeof *g * (size_t)(*n + 1));
    char *s = strdup(buf);
    if (g == NULL || s == NULL) {
        if (g)
            *list = g;
        free(s);
        b->oom = true;
        return;
    }
    *list = g;
    (*list)[(*n)++] = s;
}

#define EVIDENCE(b, ...) push_str((b), &(b)->cur->evidence, &(b)->cur->n_evidence, __VA_ARGS__)

static bool begin_finding(builder *b, const char *id, double weight, const mb_ini *remedies)
{
    mb_finding *g = realloc(b->d->findings, sizeof *g * (size_t)(b->d->n + 1));
    if (g == NULL) {
        b->oom = true;
        return false;
    }
    b->d->findings = g;
    b->cur = &g[b->d->n++];
    memset(b->cur, 0, sizeof *b->cur);
    snprintf(b->cur->id, sizeof b->cur->id, "%s", id);
    const char *title = mb_ini_get(remedies, id, "title");
    snprintf(b->cur->title, sizeof b->cur->title, "%s", title ? title : id);
    b->cur->weight = weight;
    return true;
}

typedef struct th {
    double gcb_util, gcb_share, gcb_layout, gcb_fp32, gcb_small;
    double lb_share, lb_util, lb_idle, lb_cover, lb_kps, lb_short, lb_op, lb_kernel, lb_layout;
    double lb_dispatch, lb_dispatch_n;
    double sb_share, sb_util;
    double cc_share, cc_cpu, cc_gpu, cc_launch;
    double dl_share, cp_share, cm_share, eff_low, pw_share, su_share;
    const char *data_names; /* [data_loading_bound] names: a hint, never silent */
    double dominant, runner_up;
} th;

/* cuDNN's layout conversions' share of a step's kernels; -1 unknown */
static double layout_launches(const mb_diag_figures *f)
{
    return f->layout_kernels >= 0 && f->kernels_per_step > 0 ? f->layout_kernels / f->kernels_per_step : -1;
}

static bool allocator_off(const mb_diag_figures *f, int steps);

/* One wait holds most of the host's time in syncs and blocking copies: a stall, not a habit of every step
 * (SGLang's prefill trace: a 493-ms blocking copy of 60 bytes at its start, the GPU idle before it, read "5
 * syncs, 98.7 ms of GPU idle each on average" with .item()/.cpu() remedies) */
static bool one_wait(const mb_diag_figures *f)
{
    return f->syncs >= 2 && f->longest_wait_s > 0 && f->sync_host_s > 0 && f->longest_wait_s * 2 >= f->sync_host_s;
}

/* a GPU known to have no fp8 tensor cores: compute capability below 8.9 */
static bool fp8_less(const mb_diag_figures *f)
{
    if (f->compute_major < 1)
        return false;
    return f->compute_major < 8 || (f->compute_major == 8 && f->compute_minor >= 0 && f->compute_minor < 9);
}

static bool condition_holds(const char *cond, const mb_diag_figures *f, const th *x)
{
    double low = x->eff_low;
    /* a GPU of compute capability 7 (V100, T4, RTX 20xx) has fp16 tensor cores only */
    bool fp16_only = f->compute_major >= 1 && f->compute_major < 8;
    /* ... and no bf16 at all: its activations halve in fp16 (a V100's TorchRec trace was told "bf16
     * activations" beside "no bf16") */
    /* a run whose matrix math is in bf16/fp16/fp8 already has its activations there (a bf16 Qwen was told "bf16
     * activations" and channels_last, with no convolution in it) */
    bool lowp = f->lowp_share >= 0.5;
    bool memory = f->step_table && f->memory_share > f->tensor_share;
    if (strcmp(cond, "memory_bound") == 0)
        return memory;
    if (strcmp(cond, "memory_bound_conv") == 0)
        return memory && f->conv_share > 0 && !(f->layout_share >= x->gcb_layout && f->layout_share > 0);
    if (strcmp(cond, "memory_bound_fp32") == 0)
        return memory && !lowp && !fp16_only;
    if (strcmp(cond, "memory_bound_fp16") == 0)
        return memory && !lowp && fp16_only;
    /* matrix math whose products are held, for most of their time, to their bytes ([roofline]): a decode step's
     * skinny GEMMs read their weights for a few rows, and tensor-core shapes or fp8's FLOP rate do nothing for
     * them */
    bool tensor = f->step_table && f->tensor_share >= f->memory_share;
    bool by_bytes = f->tensor_bytes_s > 0 && 2 * f->tensor_bytes_s >= f->tensor_all_s;
    if (strcmp(cond, "matmul_memory_bound") == 0)
        return tensor && by_bytes;
    if (strcmp(cond, "tensor_bound") == 0)
        return tensor && !by_bytes && !fp16_only && !(f->lowp_share >= 0.5);
    if (strcmp(cond, "tensor_bound_lowp") == 0)
        return tensor && !by_bytes && f->lowp_share >= 0.5;
    if (strcmp(cond, "tensor_bound_fp16") == 0)
        return tensor && !by_bytes && fp16_only && !(f->lowp_share >= 0.5);
    if (strcmp(cond, "nchw_layout") == 0)
        return f->layout_share >= x->gcb_layout && f->layout_share > 0;
    /* a launch-bound step pays for each conversion kernel's launch, whatever its time on the GPU */
    if (strcmp(cond, "nchw_layout_launches") == 0)
        return layout_launches(f) >= x->lb_layout && f->layout_kernels > 0;
    if (strcmp(cond, "small_grids") == 0)
        return f->small_grid_share >= x->gcb_small && f->small_grid_share > 0;
    /* simplify's own remedies for its loader's random reads are the
     * specific ones (madvise, its disk's readahead, shards) */
    if (strcmp(cond, "random_disk") == 0)
        return f->random_disk && !f->loader_remedies;
    if (strcmp(cond, "random_disk_fits") == 0)
        return f->random_disk && f->dataset_fits != 0;
    if (strcmp(cond, "gpu_decode") == 0)
        return !f->cpu_only && !f->loader_storage_bound;
    if (strcmp(cond, "cpu_decode") == 0)
        return f->cpu_only && f->gpus_unrecorded == 0 && !f->loader_storage_bound;
    if (strcmp(cond, "pageable_copy") == 0)
        return f->pageable_share > 0;
    /* fp32 matmuls or convolutions, by their recorded types or by their kernels' names (sgemm, scudnn: a trace
     * without record_shapes); a GPU of compute capability 7 (V100, T4) has fp16 tensor cores only: no TF32, no
     * bf16 (a T4's VGG-16, 45% of its step in sgemm kernels, was told nothing of it) */
    bool fp32 = f->fp32_compute || (f->fp32_math_share >= x->gcb_fp32 && f->fp32_math_share > 0);
    if (strcmp(cond, "fp32_compute") == 0)
        return fp32 && !fp16_only;
    if (strcmp(cond, "fp32_compute_fp16") == 0)
        return fp32 && fp16_only;
    /* TF32 already on: "TF32 for fp32 matmuls" is done, bf16 is what is left */
    if (strcmp(cond, "tf32_compute") == 0)
        return f->tf32_compute && !fp32;
    /* fp8 tensor cores start at compute capability 8.9 (Ada, then Hopper, Blackwell): an A100's or an A10G's
     * matrix math was told "fp8" by the three remedies above; unknown (a stage file) keeps the remedy, which
     * says what it needs */
    if (strcmp(cond, "fp8_math") == 0)
        return !fp8_less(f) && !f->fp8_compute && !by_bytes && (fp32 || f->tf32_compute || tensor);
    /* A trace's: its matrix math against the GEMM/conv ceilings, as its evidence gives it (the memory-bound
     * kernels have remedies of their own); a memset's 22 us at 29% of the memset case (a T4's VGG-16, no shapes
     * recorded) told it "bigger or better-shaped matrices" beside "no FLOP/s against the GEMM/conv ceilings" */
    if (strcmp(cond, "low_efficiency") == 0 && f->step_table) /* ... for most of that work, not a sliver of it */
        return f->tensor_efficiency >= 0 && f->tensor_efficiency < low && f->tensor_held_s >= f->tensor_beyond_s;
    if (strcmp(cond, "low_efficiency") == 0)
        return f->compute_efficiency >= 0 && f->compute_efficiency < low;
    /* a GPU machine's trace without GPU activity is no CPU-only run: its
     * remedy is to record the GPU's */
    bool cpu_run = f->cpu_only && f->gpus_unrecorded == 0;
    if (strcmp(cond, "cpu_only") == 0)
        return cpu_run;
    /* vLLM's compiled gemma-3 prefill on a CPU was told torch.compile */
    /* bf16 was told to a CPU without it, where oneDNN emulates it slower than fp32 */
    if (strcmp(cond, "cpu_uncompiled") == 0)
        return cpu_run && f->compiled_regions <= 0 && f->cpu_bf16 != 0;
    if (strcmp(cond, "cpu_compiled") == 0)
        return cpu_run && f->compiled_regions > 0 && f->cpu_bf16 != 0;
    if (strcmp(cond, "cpu_uncompiled_nobf16") == 0)
        return cpu_run && f->compiled_regions <= 0 && f->cpu_bf16 == 0;
    if (strcmp(cond, "cpu_compiled_nobf16") == 0)
        return cpu_run && f->compiled_regions > 0 && f->cpu_bf16 == 0;
    /* a CPU ResNet-18 traced with its shapes (torch 1.13: no stride or padding) was told to record shapes */
    /* a torch without Kineto records none even with record_shapes=True (Debian's 1.13: "record shapes" told to
     * loops that did) */
    if (strcmp(cond, "cpu_unshaped") == 0)
        return cpu_run && f->cpu_matmul_unshaped && !f->shapes_recorded && !f->array_form;
    if (strcmp(cond, "cpu_unshaped_nokineto") == 0)
        return cpu_run && f->cpu_matmul_unshaped && !f->shapes_recorded && f->array_form;
    if (strcmp(cond, "cpu_unshaped_params") == 0)
        return cpu_run && f->cpu_matmul_unshaped && f->shapes_recorded;
    /* SparseAdam's step, 80% of a recommender's (its ops 95% of it), read "Python and the framework lead" */
    double opt = f->cpu_optimizer_share;
    bool opt_leads = cpu_run && opt > fmax(fmax(f->cpu_matmul_share, f->cpu_memory_share),
                                           fmax(f->cpu_other_ops_share, f->cpu_host_share));
    bool opt_multi = f->fused_optimizer > 0 || f->foreach_optimizer > 0; /* foreach or fused already */
    if (strcmp(cond, "cpu_optimizer") == 0)
        return opt_leads && !opt_multi;
    if (strcmp(cond, "cpu_optimizer_foreach") == 0)
        return opt_leads && opt_multi;
    /* memory-bound ops take the most of the ops: more than the matmuls, at least the other ops and the optimizer
     * (said as "of the ops": an RL loop's Python, 64.7% of its step, leads them, 12.3%) */
    /* a recommender's EmbeddingBag: its dense gradient's fill_ 78% of the step, told "fuse them (torch.compile)" */
    if (strcmp(cond, "cpu_dense_embedding") == 0)
        return cpu_run && f->cpu_dense_embedding;
    if (strcmp(cond, "cpu_memory") == 0)
        return cpu_run && !f->cpu_dense_embedding && f->cpu_memory_share > f->cpu_matmul_share && f->cpu_memory_share >= f->cpu_other_ops_share &&
               f->cpu_memory_share >= opt;
    /* pytorch/examples' gat: its attention's elementwise work 91% of the step, its matmuls 9%; with shapes or
     * without (a GNN's gathers and scatters, 82.6% of a torch 1.13 step, were told only about its 12% of
     * matmuls: the ops are named by what they are, not by their shapes) */
    if (strcmp(cond, "cpu_other_ops") == 0)
        return cpu_run && !f->cpu_dense_embedding && f->cpu_other_ops_share > f->cpu_matmul_share &&
               f->cpu_other_ops_share > f->cpu_memory_share && f->cpu_other_ops_share >= opt;
    /* Cryptheon/CyclicRouter's CPU trace: Python between its tiny ops 52.6% of the run, and the first remedy
     * read "Use all cores" */
    bool python_leads = cpu_python_leads(f);
    /* one stretch holds most of it (a torch.save every step): no dispatch overhead to cut with larger ops */
    if (strcmp(cond, "cpu_python") == 0)
        return python_leads && !f->cpu_python_blocks;
    if (strcmp(cond, "cpu_python_block") == 0)
        return python_leads && f->cpu_python_blocks && f->cpu_python_range == NULL;
    /* a loop's own record_function("aug::python_mixup") held 4.26 of a step's 4.64 ms of Python: told "find them" */
    if (strcmp(cond, "cpu_python_block_range") == 0)
        return python_leads && f->cpu_python_blocks && f->cpu_python_range != NULL;
    /* a forward-only H100 trace was told "fused optimizers"; compiled ResNet-18s "torch.compile" */
    /* a fused optimizer already runs one kernel for many tensors (HTA's TorchRec traces: FusedAdam's
     * multi_tensor_apply kernels, told "fused or foreach optimizers") */
    bool foreach = f->foreach_optimizer > 0;
    if (strcmp(cond, "optimizer") == 0)
        return f->optimizer_steps != 0 && !(f->fused_optimizer > 0) && !foreach;
    /* a foreach optimizer (torch 2's default on CUDA) is multi-tensor already: fused=True is what is left (an
     * RTX 4090 laptop's AdamW, 8 multi_tensor_apply kernels a step, was told "several per tensor") */
    if (strcmp(cond, "optimizer_foreach") == 0)
        return f->optimizer_steps != 0 && !(f->fused_optimizer > 0) && foreach;
    /* an A10G trace of 6 kernels and no CPU op, 14.4 s of it host time, was told CUDA Graphs first */
    if (strcmp(cond, "host_unrecorded") == 0)
        return f->ops_per_step == 0;
    /* the optimizer's kernels are memory-bound: named where those lead (an inference trace had it under
     * the memory_bound key) */
    if (strcmp(cond, "optimizer_memory") == 0)
        return f->optimizer_steps != 0 && !(f->fused_optimizer > 0) && !foreach && f->step_table &&
               f->memory_share > f->tensor_share;
    if (strcmp(cond, "optimizer_memory_foreach") == 0)
        return f->optimizer_steps != 0 && !(f->fused_optimizer > 0) && foreach && f->step_table &&
               f->memory_share > f->tensor_share;
    /* CUDA's start-up knobs do not apply to an AMD GPU's run (a ROCm MI250 trace was told CUDA_MODULE_LOADING) */
    /* a step that replays CUDA graphs already (HTA's TorchRec trace: 14 cudaGraphLaunch a step beside 1215
     * kernels) is told to capture more of it, not to start */
    /* a step that runs fused attention kernels already uses SDPA or FlashAttention (a LoRA BERT on an A100,
     * its SDPA in fp32 on the memory-efficient kernels, was told to use them) */
    if (strcmp(cond, "unfused_attention") == 0)
        return f->step_table && f->tensor_share >= f->memory_share && f->gemm_share > f->conv_share &&
               !(f->attention_share > 0);
    if (strcmp(cond, "one_wait") == 0)
        return one_wait(f);
    if (strcmp(cond, "many_waits") == 0)
        return !one_wait(f);
    if (strcmp(cond, "allocator_off") == 0)
        return allocator_off(f, f->steps);
    if (strcmp(cond, "allocator_on") == 0)
        return !allocator_off(f, f->steps);
    if (strcmp(cond, "graphed") == 0)
        return f->graph_replays > 0;
    if (strcmp(cond, "not_graphed") == 0)
        return !(f->graph_replays > 0);
    if (strcmp(cond, "cuda_runtime") == 0)
        return !f->hip_runtime;
    if (strcmp(cond, "hip_runtime") == 0)
        return f->hip_runtime;
    if (strcmp(cond, "not_compiled") == 0)
        return f->compiled_regions <= 0;
    if (strcmp(cond, "compiled") == 0)
        return f->compiled_regions > 0;
    if (strcmp(cond, "gpu_unrecorded") == 0)
        return f->gpus_unrecorded > 0;
    if (strcmp(cond, "gpu_run") == 0)
        return !f->cpu_only;
    /* "pin_memory=True" where the copies are not all pinned already (a MONAI loader's 24 pinned H2D copies were
     * told to pin) */
    if (strcmp(cond, "gpu_unpinned") == 0)
        return !f->cpu_only && !(f->pinned_share > 0 && f->pageable_share == 0);
    /* the loader's workers already use the CPUs the step's threads leave: simplify's figures, or a trace's
     * loader iterating in worker processes (two workers on two CPUs: the step's GEMMs 2.83 -> 6.75 ms) */
    if (strcmp(cond, "cpu_cores_idle") == 0)
        return f->gpus_unrecorded == 0 && f->ops_per_step != 0 && !cpus_all_busy(f) && !f->cpus_busy && !python_leads &&
               !(f->data_in_process >= 0 && f->data_in_process < 1);
    /* DDP's and FSDP's remedies are a training step's: a forward-only trace (two RTX 4090s' tensor-parallel
     * Llama forward, its all-gather of the logits) was told to prefetch FSDP's all-gathers */
    bool inference = f->backward_ops == 0;
    if (strcmp(cond, "comm_inference") == 0)
        return inference;
    if (strcmp(cond, "comm_sharded") == 0)
        return !inference && f->comm_sharded_s > 0 && f->comm_sharded_s >= f->comm_allreduce_s;
    bool replicated = !inference && !(f->comm_sharded_s > 0 && f->comm_sharded_s >= f->comm_allreduce_s);
    if (strcmp(cond, "comm_replicated") == 0)
        return replicated;
    /* gradients all-reduced in bf16 already (8 MI300Xs' DDP ResNet, a bf16 all-reduce, was told "bf16
     * gradients") */
    bool lowp_grads = f->comm_allreduce_lowp_s > 0 && f->comm_allreduce_lowp_s * 2 >= f->comm_allreduce_s;
    if (strcmp(cond, "comm_replicated_fp32") == 0)
        return replicated && !lowp_grads;
    if (strcmp(cond, "comm_replicated_lowp") == 0)
        return replicated && lowp_grads;
    if (strcmp(cond, "cpus_shared") == 0)
        return f->cpus_shared;
    if (strcmp(cond, "cpus_free") == 0)
        return !f->cpus_shared;
    return false;
}

static void add_remedies(builder *b, const mb_ini *remedies, const mb_diag_figures *f, const th *x)
{
    const char *signs = f->gpus_unrecorded > 0 ? mb_ini_get(remedies, b->cur->id, "signs.gpu_unrecorded")
                        : f->cpu_only          ? mb_ini_get(remedies, b->cur->id, "signs.cpu_only")
                                               : NULL;
    if (signs == NULL)
        signs = mb_ini_get(remedies, b->cur->id, "signs");
    if (signs)
        EVIDENCE(b, "the pattern: %s", signs);
    for (int i = 0; i < remedies->n; i++) {
        const mb_ini_entry *e = &remedies->e[i];
        if (strcmp(e->section, b->cur->id) != 0)
            continue;
        if (strcmp(e->key, "remedy") == 0 ||
            (strncmp(e->key, "remedy.", 7) == 0 && condition_holds(e->key + 7, f, x)))
            push_str(b, &b->cur->remedies, &b->cur->n_remedies, "%s", e->value);
    }
}

static const char *pct(char *buf, size_t len, double share)
{
    if (share < 0)
        snprintf(buf, len, "unknown");
    else
        snprintf(buf, len, "%.1f%%", 100 * share);
    return buf;
}


static int load_thresholds(const mb_ini *t, th *x, mb_err *err)
{
    x->data_names = mb_ini_get(t, "data_loading_bound", "names"); /* optional: no name hints without it */
    if (mb_ini_number(t, "gpu_compute_bound", "gpu_utilization_min", &x->gcb_util, err) ||
        mb_ini_number(t, "gpu_compute_bound", "compute_share_min", &x->gcb_share, err) ||
        mb_ini_number(t, "gpu_compute_bound", "layout_share_min", &x->gcb_layout, err) ||
        mb_ini_number(t, "gpu_compute_bound", "fp32_math_share_min", &x->gcb_fp32, err) ||
        mb_ini_number(t, "gpu_compute_bound", "small_grid_share_min", &x->gcb_small, err) ||
        mb_ini_number(t, "launch_bound", "share_min", &x->lb_share, err) ||
        mb_ini_number(t, "launch_bound", "gpu_utilization_max", &x->lb_util, err) ||
        mb_ini_number(t, "launch_bound", "gpu_idle_share_min", &x->lb_idle, err) ||
        mb_ini_number(t, "launch_bound", "idle_covered_min", &x->lb_cover, err) ||
        mb_ini_number(t, "launch_bound", "kernels_per_step_min", &x->lb_kps, err) ||
        mb_ini_number(t, "launch_bound", "short_kernel_launches", &x->lb_short, err) ||
        mb_ini_number(t, "launch_bound", "host_us_per_op_max", &x->lb_op, err) ||
        mb_ini_number(t, "launch_bound", "host_us_per_kernel_max", &x->lb_kernel, err) ||
        mb_ini_number(t, "launch_bound", "layout_kernels_share_min", &x->lb_layout, err) ||
        mb_ini_number(t, "launch_bound", "host_per_op_metadata_max", &x->lb_dispatch, err) ||
        mb_ini_number(t, "launch_bound", "metadata_ops_min", &x->lb_dispatch_n, err) ||
        mb_ini_number(t, "sync_bound", "share_min", &x->sb_share, err) ||
        mb_ini_number(t, "sync_bound", "gpu_utilization_max", &x->sb_util, err) ||
        mb_ini_number(t, "cpu_compute_bound", "share_min", &x->cc_share, err) ||
        mb_ini_number(t, "cpu_compute_bound", "cpu_utilization_min", &x->cc_cpu, err) ||
        mb_ini_number(t, "cpu_compute_bound", "gpu_utilization_max", &x->cc_gpu, err) ||
        mb_ini_number(t, "cpu_compute_bound", "launch_share_max", &x->cc_launch, err) ||
        mb_ini_number(t, "data_loading_bound", "share_min", &x->dl_share, err) ||
        mb_ini_number(t, "periodic_work_bound", "share_min", &x->pw_share, err) ||
        mb_ini_number(t, "setup", "share_min", &x->su_share, err) ||
        mb_ini_number(t, "copy_bound", "share_min", &x->cp_share, err) ||
        mb_ini_number(t, "communication_bound", "share_min", &x->cm_share, err) ||
        mb_ini_number(t, "efficiency", "low", &x->eff_low, err) ||
        mb_ini_number(t, "diagnosis", "dominant_share", &x->dominant, err) ||
        mb_ini_number(t, "diagnosis", "runner_up_ratio", &x->runner_up, err))
        return err->code;
    return MB_OK;
}

/* A pattern is reported when its weight reaches its threshold, or when it
 * explains most of the run whatever the threshold says. */
static bool passes(double weight, double min, const th *x)
{
    return weight >= min || weight > x->dominant;
}

#define LIMIT_LEN 128 /* limit()'s text */

/* A finding's threshold as its evidence states it: a share under its own
 * threshold that passes as more than half of the whole says so, or
 * "59.5% (threshold 60.0%)" reads as a finding that should not be there. */
static const char *limit(char *buf, size_t len, double weight, double min, const th *x)
{
    char t[32], w[32];
    pct(t, sizeof t, min);
    pct(w, sizeof w, weight);
    if (weight >= min || !(weight > x->dominant))
        snprintf(buf, len, "threshold %s", t);
    else if (strcmp(w, t) == 0) /* 59.96% reads "60.0%": "below 60.0%" beside it needs the figure, cut, not
                                   rounded, to two places (59.99%) so that it reads below */
        snprintf(buf, len, "below its threshold %s, at %d.%02d%%, but more than half", t,
                 (int)(10000 * weight) / 100, (int)(10000 * weight) % 100);
    else
        snprintf(buf, len, "below its threshold %s but more than half", t);
    return buf;
}

/* Each pattern: test, then evidence lines with the figures and thresholds. */

#define MAX_LOADER_REMEDIES 8

static const char *ev_text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What reading only the batches' bytes would take at this machine's disk
 * ceiling (mb_gap.needed_seconds): the gain of the loader's own remedies,
 * beside the stage's time lost against what the device served. */
static void needed_evidence(builder *b, const mb_gap *g, const char *delivered)
{
    if (!(g->needed_seconds > 0) || g->needed_case < 0 || g->needed_stage < 0)
        return;
    const mb_case_ref *c = &g->ceilings->cases[g->needed_case];
    char t[32], blk[32], now[32];
    mb_fmt_seconds(t, sizeof t, mb_gap_per_step(g, g->needed_seconds));
    mb_fmt_si(blk, sizeof blk, g->needed_block, "B");
    mb_fmt_seconds(now, sizeof now, mb_gap_per_step(g, g->stages[g->needed_stage].stage->seconds));
    char how[160];
    if (g->needed_queued)
        snprintf(how, sizeof how, "; no case of one read at a time was measured, and the loader makes fewer at once: "
                                  "longer than this");
    else if (g->needed_capped && g->needed_workers > 0)
        snprintf(how, sizeof how, "; its %d worker%s reads, one at a time each, %s this, the disk's best",
                 g->needed_workers, g->needed_workers == 1 ? "'s" : "s'",
                 g->needed_workers == 1 ? "reach" : "together reach");
    else if (g->needed_capped)
        snprintf(how, sizeof how, "; reads one at a time reach this, the disk's best");
    else if (g->needed_workers > 0)
        snprintf(how, sizeof how, "; %s one at a time in each of its %d worker%s", g->needed_faults ? "4 KiB page "
                 "faults (MADV_RANDOM)" : "reads of an item", g->needed_workers, g->needed_workers == 1 ? "" : "s");
    else
        snprintf(how, sizeof how, "; %s one at a time in the step's process (no workers)",
                 g->needed_faults ? "4 KiB page faults (MADV_RANDOM)" : "reads of an item");
    EVIDENCE(b, "read only for what it delivers (%s a batch, %s an item), this machine's disk would take %s a batch "
                "(%s%s), where the loop's data loading takes %s",
             delivered, blk, t, c->label[0] ? c->label : c->id, how, now);
}

/* A simplify run's loader alone (simplify.data_loading, written by
 * python/mlbench/simplify.py): what it read from storage for what it
 * delivered, what bound it, and its own remedies, first: gap tells the
 * story simplify told (nanoGPT's memmap loader, x538 read-amplified, was
 * offered "more DataLoader workers" here and madvise(MADV_RANDOM) there). */
static void loader_evidence(builder *b, const mb_gap *g)
{
    const cJSON *dl = ev_object(g->run->evidence, "simplify.data_loading");
    if (dl == NULL)
        return;
    const char *bound = ev_text(dl, "bound"), *cache = ev_text(dl, "cache"), *why = ev_text(dl, "mechanism");
    double storage = ev_num(dl, "storage_bytes_per_batch"), delivered = ev_num(dl, "delivered_bytes_per_batch");
    double amp = ev_num(dl, "amplification"), per_item = ev_num(dl, "cpu_seconds_per_item");
    double dev = ev_num(dl, "device_busy_share"), cpu = ev_num(dl, "cpu_busy_share");
    char st[32], dv[32], x[32], c[32], d[32], state[48] = "";
    mb_fmt_si(st, sizeof st, storage, "B");
    mb_fmt_si(dv, sizeof dv, delivered, "B");
    mb_fmt_ratio(x, sizeof x, amp);
    if (cache)
        snprintf(state, sizeof state, ", page cache %s", cache);
    const cJSON *amplified = cJSON_GetObjectItemCaseSensitive(dl, "amplified");
    if (cJSON_IsTrue(amplified) && storage >= 0 && delivered > 0) {
        EVIDENCE(b, "the loader alone (simplify%s) read %s from storage per batch for the %s it delivers (%s, "
                    "read-amplified)%s%s",
                 state, st, dv, x, why ? ": " : "", why ? why : "");
        needed_evidence(b, g, dv);
    }
    else if (bound && strcmp(bound, "storage") == 0 && storage >= 0)
        EVIDENCE(b, "the loader alone (simplify%s) is storage-bound: the device busy %s of its time for %s per batch "
                    "from storage (%s what it delivers)",
                 state, pct(d, sizeof d, dev), st, x);
    else if (bound && strcmp(bound, "cpu+storage") == 0) {
        /* both busy at least half its time: one process reading and
         * computing in turns, or workers near both limits */
        mb_fmt_seconds(c, sizeof c, per_item);
        char cp[32];
        EVIDENCE(b, "the loader alone (simplify%s) is CPU- and storage-bound: its processes on a CPU %s of the time "
                    "(%s of CPU per item), the device busy %s for %s per batch from storage",
                 state, pct(cp, sizeof cp, cpu), per_item >= 0 ? c : "?", pct(d, sizeof d, dev),
                 storage >= 0 ? st : "?");
    } else if (bound && strcmp(bound, "cpu") == 0) {
        /* what its CPU did, in simplify's words (a file from before it wrote them: the general ones) */
        const char *what = ev_text(dl, "cpu_work");
        mb_fmt_seconds(c, sizeof c, per_item);
        EVIDENCE(b, "the loader alone (simplify%s) is CPU-bound: %s of CPU per item, %s per batch from storage: its "
                    "time is %s, not the device",
                 state, per_item >= 0 ? c : "?", storage >= 0 ? st : "?", what ? what : "reading, decoding, augmenting");
    } else if (bound && strcmp(bound, "waiting") == 0)
        EVIDENCE(b, "the loader alone (simplify%s) is neither CPU- nor storage-bound: its processes on a CPU %s of "
                    "the time, the device busy %s: it waits (sleeps, locks, a network source, its workers' hand-over)",
                 state, pct(c, sizeof c, cpu), pct(d, sizeof d, dev));
    const cJSON *rem = cJSON_GetObjectItemCaseSensitive(dl, "remedies"), *r;
    int taken = 0;
    cJSON_ArrayForEach(r, rem)
    {
        if (cJSON_IsString(r) && taken++ < MAX_LOADER_REMEDIES) /* simplify names three; a file could name millions */
            push_str(b, &b->cur->remedies, &b->cur->n_remedies, "%s", r->valuestring);
    }
}

/* The evidence that the full loop's processes keep its CPUs busy, and
 * whether the loader's workers and the step share them. */
static void cpus_busy_evidence(builder *b, const mb_diag_figures *f)
{
    if (!f->cpus_busy)
        return;
    char cpu[32], workers[32], mainp[32], floor_s[32], wait[32], p1[32], parts[160];
    mb_fmt_seconds(cpu, sizeof cpu, f->cpu_step_s);
    mb_fmt_seconds(workers, sizeof workers, f->cpu_workers_s);
    mb_fmt_seconds(mainp, sizeof mainp, f->cpu_main_s);
    mb_fmt_seconds(floor_s, sizeof floor_s, f->cpu_floor_s);
    if (f->cpu_workers >= 1)
        snprintf(parts, sizeof parts, "its %d loader worker%s %s, the step's process %s", f->cpu_workers,
                 f->cpu_workers == 1 ? "" : "s", workers, mainp);
    else
        snprintf(parts, sizeof parts, "all of it the step's process");
    EVIDENCE(b, "the full loop took %s of CPU a step (%s) on the %d CPU%s it may use: %s a step at the least, %s of "
                "the step: %s (simplify, mode full)",
             cpu, parts, f->cpu_cpus, f->cpu_cpus == 1 ? "" : "s", floor_s, pct(p1, sizeof p1, f->cpu_busy_share),
             f->cpus_shared ? "data loading and the step share the CPUs" : "the loop keeps its CPUs busy");
    if (f->cpus_shared && f->cpu_main_wait_s > 0) {
        mb_fmt_seconds(wait, sizeof wait, f->cpu_main_wait_s);
        EVIDENCE(b, "the thread running the step waited for a CPU %s a step (runnable, not running)", wait);
    }
}

static void try_data(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32];
    char lim[LIMIT_LEN];
    if (!passes(f->data_share, x->dl_share, x) || !begin_finding(b, "data_loading_bound", f->data_share, r))
        return;
    if (f->step_table)
        EVIDENCE(b, "the GPU idles while the host waits for the next batch (DataLoader): %s of the %s "
                    "(%s)",
                 pct(p1, sizeof p1, f->data_share), f->span, limit(lim, sizeof lim, f->data_share, x->dl_share, x));
    else
        EVIDENCE(b, "data loading takes %s of the %s (%s)", pct(p1, sizeof p1, f->data_share), f->span,
                 limit(lim, sizeof lim, f->data_share, x->dl_share, x));
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s of the time", pct(p1, sizeof p1, f->gpu_util));
    if (f->data_in_process >= 1)
        EVIDENCE(b, "every batch is loaded in the training process (_SingleProcessDataLoaderIter: num_workers=0): "
                    "reading, decoding and collating run in the step, none of it beside the %s",
                 f->cpu_only ? "step's compute" : "GPU's work");
    else if (f->data_in_process > 0)
        EVIDENCE(b, "%s of the batches are loaded in the training process (_SingleProcessDataLoaderIter: "
                    "num_workers=0)",
                 pct(p1, sizeof p1, f->data_in_process));
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        if (strcmp(st->stage->component, "disk") != 0 || st->match < 0 || strcmp(st->stage->work_unit, "s") == 0)
            continue;
        if (st->beyond[0])
            EVIDENCE(b, "stage '%s' reads %s at %.4g GB/s, %s", st->stage->name,
                     st->stage->pattern ? st->stage->pattern : "", st->measured_rate / 1e9, st->beyond);
        else
            EVIDENCE(b, "stage '%s' reads %s at %.1f%% of the measured disk ceiling (%.4g of %.4g GB/s)",
                     st->stage->name, st->stage->pattern ? st->stage->pattern : "", 100 * st->efficiency,
                     st->measured_rate / 1e9, st->ceiling_rate / 1e9);
    }
    if (g->run->evidence)
        loader_evidence(b, g);
    cpus_busy_evidence(b, f);
    add_remedies(b, r, f, x);
}

static void us_each(char *buf, size_t len, double seconds, double count)
{
    double each = seconds / count;
    if (each >= 1e-3)
        snprintf(buf, len, "%.3g ms", each * 1e3);
    else
        snprintf(buf, len, "%.3g us", each * 1e6);
}

/* Step table: kernels so short that launching them costs about as much as
 * running them (median kernel against the measured launch ceiling; without
 * a launch ceiling, many kernels per step), launch calls covering most of
 * the idle time, or an idle host time per recorded op no longer than
 * dispatching an op takes, mark host overhead (the host cannot feed the
 * GPU) rather than host compute. The last one keeps a loop of medium
 * kernels and thousands of ops per step from reading as CPU compute: the
 * same conv net on an H100 (median kernel 2.2x the launch cost) and an H200
 * (1.7x) was once called CPU compute bound on one, launch bound on the other. */
/* The GPU-idle host time per op against what the trace's own do-nothing ops take to dispatch (aten::view,
 * aten::empty: this machine, this profiler): within a few of them, the host is dispatching ops, however slowly
 * (a DDP ResNet on an A100 took 26.8 us for each and idled its GPU 35.2 us of host code per op: read "CPU
 * compute bound", told to move its augmentation to the GPU); -1 unknown. */
static double host_op_metadata_ratio(const mb_diag_figures *f, const th *x)
{
    if (!(f->host_op_s > 0) || !(f->metadata_op_s > 0) || f->metadata_ops < x->lb_dispatch_n)
        return -1;
    return f->host_op_s / f->metadata_op_s;
}

static bool dispatching(const mb_diag_figures *f, const th *x)
{
    double r = host_op_metadata_ratio(f, x);
    return (f->host_op_s > 0 && f->host_op_s <= x->lb_op * 1e-6) || (r > 0 && r <= x->lb_dispatch);
}

static bool host_overhead_signature(const mb_diag_figures *f, const th *x)
{
    /* far more host time per kernel than launching costs: the host runs
     * code of its own, however short the kernels (an A10G trace: 6 kernels
     * of 1.4 us in 14.4 s of host time, read "launch bound") */
    if (f->host_kernel_s > x->lb_kernel * 1e-6)
        return false;
    double hostov = f->launch_idle_share + f->host_idle_share;
    if (hostov > 0 && f->launch_idle_share >= x->lb_cover * hostov)
        return true;
    if (dispatching(f, x))
        return true;
    if (f->median_kernel_s > 0 && f->launch_ceiling_s > 0)
        return f->median_kernel_s <= x->lb_short * f->launch_ceiling_s;
    return f->kernels_per_step >= x->lb_kps;
}

static void kernel_evidence(builder *b, const mb_diag_figures *f, const th *x)
{
    char e[32], c[32];
    if (f->kernels_per_step >= 0)
        EVIDENCE(b, "%.0f kernel%s per %s", f->kernels_per_step, llround(f->kernels_per_step) == 1 ? "" : "s",
                 f->span);
    if (f->median_kernel_s > 0) {
        us_each(e, sizeof e, f->median_kernel_s, 1);
        if (f->launch_ceiling_s > 0) {
            us_each(c, sizeof c, f->launch_ceiling_s, 1);
            EVIDENCE(b, "median kernel about %s against a measured launch cost of %s per kernel (%.1fx; host "
                        "overhead at %.1fx or less)",
                     e, c, f->median_kernel_s / f->launch_ceiling_s, x->lb_short);
        } else
            EVIDENCE(b, "median kernel about %s (no launch ceiling measured to compare with: host overhead at %.0f "
                        "kernels per step or more)",
                     e, x->lb_kps);
    }
    if (f->host_op_s > 0) {
        char yard[224] = "";
        double r = host_op_metadata_ratio(f, x);
        us_each(e, sizeof e, f->host_op_s, 1);
        if (r > 0) {
            us_each(c, sizeof c, f->metadata_op_s, 1);
            snprintf(yard, sizeof yard, "; %.1fx the %s its ops that do no work take here (aten::view, aten::empty, "
                                        "...: %.0f of them), at most %.0fx",
                     r, c, f->metadata_ops, x->lb_dispatch);
        }
        EVIDENCE(b, "the GPU's idle time in host code is %s per op the trace recorded (%.0f per %s): %s (host "
                    "overhead at %.0f us per op or less%s)",
                 e, f->ops_per_step, f->span,
                 dispatching(f, x) ? "what dispatching them costs" : "more than dispatching them costs", x->lb_op,
                 yard);
    }
    if (f->host_kernel_s > x->lb_kernel * 1e-6) {
        mb_fmt_seconds(e, sizeof e, f->host_kernel_s);
        EVIDENCE(b, "the GPU's idle time in host code is %s per kernel it ran: far more than launching costs, "
                    "however short the kernels (host overhead at %.0f us per kernel or less)",
                 e, x->lb_kernel);
    }
}

static void try_launch_step(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32], p3[32], p4[32], queued[128] = "";
    char lim[LIMIT_LEN];
    bool overhead = host_overhead_signature(f, x);
    /* with many short kernels, the GPU's own gaps between queued ones are launch overhead too (HTA's kernel wait) */
    double weight = overhead ? f->launch_idle_share + f->host_idle_share + f->queued_share : f->launch_idle_share;
    if (!passes(weight, x->lb_share, x) || !begin_finding(b, "launch_bound", weight, r))
        return;
    if (f->queued_share > 0)
        snprintf(queued, sizeof queued, ", with the next kernel already queued %s (kernel wait%s)",
                 pct(p4, sizeof p4, f->queued_share), overhead ? "" : ", not counted: few, long kernels");
    EVIDENCE(b, "GPU idle %s of the %s: the host in launch calls %s, in other framework/Python code %s%s "
                "(%s)",
             pct(p1, sizeof p1, f->gpu_idle_share), f->span, pct(p2, sizeof p2, f->launch_idle_share),
             pct(p3, sizeof p3, f->host_idle_share), queued, limit(lim, sizeof lim, weight, x->lb_share, x));
    if (f->launch_share > 0)
        EVIDENCE(b, "host time in kernel launch calls: %s of the %s, overlapping GPU work or not",
                 pct(p1, sizeof p1, f->launch_share), f->span);
    kernel_evidence(b, f, x);
    if (layout_launches(f) >= x->lb_layout && f->layout_kernels > 0)
        EVIDENCE(b, "cuDNN's conversions between NCHW and NHWC around the convolutions (nchwToNhwc/nhwcToNchw "
                    "kernels): %.0f of the %.0f kernels a %s launches (%s)",
                 f->layout_kernels, f->kernels_per_step, f->span, pct(p1, sizeof p1, layout_launches(f)));
    if (!overhead)
        EVIDENCE(b, "only the GPU idle time inside launch calls is counted: few, long kernels are not a host-overhead "
                    "signature");
    add_remedies(b, r, f, x);
}

static void try_launch(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    if (f->step_table) {
        try_launch_step(b, f, x, r);
        return;
    }
    bool by_share = f->launch_share >= x->lb_share && (f->gpu_util < 0 || f->gpu_util <= x->lb_util);
    bool by_idle = f->launch_idle_ratio >= x->lb_cover && f->gpu_idle_share >= x->lb_idle;
    bool dominant = f->launch_share > x->dominant;
    if (!by_share && !by_idle && !dominant)
        return;
    double weight = by_share || dominant ? f->launch_share : f->gpu_idle_share;
    if (!begin_finding(b, "launch_bound", weight, r))
        return;
    EVIDENCE(b, "host time in kernel launch calls: %s of the run (threshold %s)%s",
             pct(p1, sizeof p1, f->launch_share), pct(p2, sizeof p2, x->lb_share), by_share ? "" : " (below)");
    if (f->launches > 0) {
        char e[32];
        us_each(e, sizeof e, f->launch_share * f->wall, f->launches);
        EVIDENCE(b, "%.0f launches, %s each on average", f->launches, e);
    }
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s (launch bound below %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->lb_util));
    if (f->launch_idle_ratio >= 0)
        EVIDENCE(b, "GPU idle %s of its window; host launch time = %.0f%% of that idle time (threshold %.0f%%)",
                 pct(p1, sizeof p1, f->gpu_idle_share), 100 * f->launch_idle_ratio, 100 * x->lb_cover);
    add_remedies(b, r, f, x);
}

/* The set-up calls the trace names, largest time first (evidence
 * host.setup.calls): "cudaFree 3.98 s (4 calls), ...". */
static void setup_calls_evidence(builder *b, const mb_gap *g)
{
    const cJSON *calls = ev_object(g->run->evidence, "host.setup.calls");
    const cJSON *shown[3] = {NULL};
    char list[320] = "";
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        const cJSON *c, *best = NULL;
        cJSON_ArrayForEach(c, calls)
        {
            bool used = false;
            for (int j = 0; j < k; j++)
                used |= shown[j] == c;
            if (!used && (best == NULL || ev_num(c, "seconds") > ev_num(best, "seconds")))
                best = c;
        }
        if (best == NULL || best->string == NULL)
            break;
        shown[k] = best;
        char t[32];
        mb_fmt_seconds(t, sizeof t, ev_num(best, "seconds"));
        double n = ev_num(best, "count");
        int w = snprintf(list + at, sizeof list - at, "%s%s %s (%.0f call%s)", k ? ", " : "", best->string, t, n,
                         llround(n) == 1 ? "" : "s");
        if (w < 0 || (size_t)w >= sizeof list - at)
            break;
        at += (size_t)w;
    }
    if (at)
        EVIDENCE(b, "the calls, in the whole trace: %s", list);
}

/* What the rest of the run is made of, once the set-up is left aside: the
 * step's own picture in a trace that holds its first iterations. */
static void rest_evidence(builder *b, const mb_diag_figures *f)
{
    double rest = 1 - f->setup_share;
    if (!(rest > 0.001))
        return;
    struct { const char *what; double share; } part[] = {
        {"matrix math", f->tensor_share}, {"memory-bound kernels", f->memory_share},
        {"host code (GPU idle)", f->host_idle_share}, {"launch calls (GPU idle)", f->launch_idle_share},
        {"sync (GPU idle)", f->sync_share}, {"waiting for data", f->data_share},
        {"collectives", f->comm_share}, {"kernel wait", f->queued_share},
    };
    enum { N = sizeof part / sizeof part[0] };
    char list[320] = "", p1[32];
    size_t at = 0;
    bool used[N] = {false};
    for (int k = 0; k < 3; k++) {
        int best = -1;
        for (int i = 0; i < N; i++)
            if (!used[i] && part[i].share > 0 && (best < 0 || part[i].share > part[best].share))
                best = i;
        if (best < 0)
            break;
        used[best] = true;
        int w = snprintf(list + at, sizeof list - at, "%s%s %s", k ? ", " : "", part[best].what,
                         pct(p1, sizeof p1, part[best].share / rest));
        if (w < 0 || (size_t)w >= sizeof list - at)
            break;
        at += (size_t)w;
    }
    char t[32];
    mb_fmt_seconds(t, sizeof t, rest * f->wall);
    if (at)
        EVIDENCE(b, "without it, the %s's other %s: %s", f->span, t, list);
}

/* Device allocations and frees by the tensor, every step: PyTorch's caching allocator off
 * (PYTORCH_NO_CUDA_MEMORY_CACHING=1: TraceLens's "ddp_resnet18_no_pool" trace on MI300X, 292 hipMalloc and 272
 * hipFree a step inside the ops, was told empty_cache and fragmentation) */
static bool allocator_off(const mb_diag_figures *f, int steps)
{
    return steps > 0 && f->setup_mallocs >= 20.0 * steps && f->setup_frees >= 20.0 * steps;
}

/* GPU idle in allocation and set-up calls (a trace's step table): once, in
 * a trace of the first iterations (context creation, a kernel's first
 * launch loading its module), or every step (the caching allocator freeing
 * and allocating again). */
static void try_setup(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], lim[LIMIT_LEN];
    int steps = g->run->steps;
    /* a graph capture is start-up however many steps it spans (SGLang's and vLLM's capture traces read
     * "Allocation and set-up in every step" with allocator remedies) */
    bool capture = f->setup_capture_s > 0 && f->setup_capture_s * 2 >= f->setup_calls_s;
    bool every = steps > 0 && f->setup_steps * 2 > steps && !capture;
    const char *id = every ? "setup_every_step" : "setup_once";
    /* the profiler's own buffers (CUPTI's Activity Buffer Request) are no cost of the loop's: the finding weighs
     * the rest (nano-vllm's store_kvcache trace: 218 of its 356 us of set-up, read "One-time set-up, 51.6%" of a
     * window whose host Python holds most of the rest) */
    double own = f->setup_calls_s > 0 ? f->setup_share * fmin(1, f->setup_profiler_s / f->setup_calls_s) : 0;
    double weight = f->setup_share - own;
    if (!f->step_table || !passes(weight, x->su_share, x) || !begin_finding(b, id, weight, r))
        return;
    EVIDENCE(b, "GPU idle while the host allocates, frees or sets up: %s of the %s (%s)",
             pct(p1, sizeof p1, weight), f->span, limit(lim, sizeof lim, weight, x->su_share, x));
    if (own > 0) {
        char p2[32];
        EVIDENCE(b, "besides, %s of the %s in the profiler's own buffers (Activity Buffer Request), which the loop "
                    "without the profiler does not pay: left out of this finding",
                 pct(p2, sizeof p2, own), f->span);
    }
    if (steps > 0 && f->setup_steps >= 0)
        EVIDENCE(b, "set-up calls in %.0f of %d steps", f->setup_steps, steps);
    else
        EVIDENCE(b, "the trace marks no steps: its window holds the set-up before the loop");
    setup_calls_evidence(b, g);
    if (capture)
        EVIDENCE(b, "most of it a CUDA/HIP graph capture: its launches record the graph, none runs; a one-time "
                    "start-up, however many steps it spans");
    if (every && allocator_off(f, steps))
        EVIDENCE(b, "in the whole trace (%d steps), %.0f device allocations and %.0f frees: a tensor each, the "
                    "caching allocator's work not being done",
                 steps, f->setup_mallocs, f->setup_frees);
    double startup = ev_num(g->run->evidence, "host.setup.gpu_startup_s");
    if (startup > 0) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, startup);
        EVIDENCE(b, "of it, %s with the trace's first kernel launched and not started: the GPU starting up "
                    "(context and module initialisation on first use)", t);
    }
    if (!every)
        rest_evidence(b, f);
    add_remedies(b, r, f, x);
}

static void try_sync(builder *b, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], e[32];
    char lim[LIMIT_LEN];
    /* The step table counts only GPU idle time inside syncs: waiting for a
     * busy GPU is the GPU's time, so no utilization gate is needed. */
    bool util_ok = f->step_table || f->gpu_util < 0 || f->gpu_util <= x->sb_util;
    if (!passes(f->sync_share, x->sb_share, x) || !util_ok || !begin_finding(b, "sync_bound", f->sync_share, r))
        return;
    if (f->sync_host_share >= 0)
        EVIDENCE(b, "the GPU idles while the host waits in syncs: %s of the run (%s); host in sync "
                    "calls %s",
                 pct(p1, sizeof p1, f->sync_share), limit(lim, sizeof lim, f->sync_share, x->sb_share, x),
                 pct(e, sizeof e, f->sync_host_share));
    else
        EVIDENCE(b, "host time waiting in synchronizations: %s of the run (%s)",
                 pct(p1, sizeof p1, f->sync_share), limit(lim, sizeof lim, f->sync_share, x->sb_share, x));
    if (f->syncs > 0) {
        us_each(e, sizeof e, f->sync_share * f->wall, f->syncs);
        if (f->blocking_copies > 0)
            EVIDENCE(b, "%.0f syncs and blocking copies (%.0f of them copies), %s of GPU idle each on average",
                     f->syncs, f->blocking_copies, e);
        else
            EVIDENCE(b, "%.0f syncs, %s of GPU idle each on average", f->syncs, e);
    }
    if (one_wait(f)) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, f->longest_wait_s);
        EVIDENCE(b, "one of them, %s, holds %s of the host's time in syncs and blocking copies: a single stall, not "
                    "a habit of every step",
                 t, pct(p1, sizeof p1, f->longest_wait_s / f->sync_host_s));
    }
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s", pct(p1, sizeof p1, f->gpu_util));
    add_remedies(b, r, f, x);
}

/* Each GEMM/conv stage with FLOPs and a ceiling: achieved against it; on a
 * CPU, the memory-bound ops' bytes against host memory too. */
static void flop_evidence(builder *b, const mb_gap *g)
{
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        if (st->match >= 0 && strcmp(s->component, "hostmem") == 0 && strcmp(s->work_unit, "byte") == 0 &&
            s->role == NULL) {
            char m[32], c[32];
            mb_fmt_rate(m, sizeof m, st->measured_rate, "byte");
            mb_fmt_rate(c, sizeof c, st->ceiling_rate, "byte");
            EVIDENCE(b, "%s: %s, %.0f%% of the measured host memory ceiling (%s, %s)", s->name, m,
                     100 * st->efficiency, c, case_name(&g->ceilings->cases[st->match]));
        }
        if (st->match < 0 || strcmp(s->work_unit, "flop") != 0)
            continue;
        char m[32], c[32];
        mb_fmt_rate(m, sizeof m, st->measured_rate, "flop");
        mb_fmt_rate(c, sizeof c, st->ceiling_rate, "flop");
        /* attention has no benchmark of its own: its ceiling is the GEMM case of its dtype */
        bool attn = strcmp(s->component, "attention") == 0;
        if (st->by_bytes) { /* the roofline's memory side held it: the GEMM case's rate is not what it is held to */
            EVIDENCE(b, "%s: %s, %.0f%% of the roofline its bytes set (%s: %.1f FLOP a byte at the measured memory "
                        "ceiling, under the %s case's rate)", s->name, m, 100 * st->efficiency, c,
                     s->work / s->min_bytes, case_name(&g->ceilings->cases[st->match]));
            continue;
        }
        EVIDENCE(b, "%s: %s, %.0f%% of the measured %s ceiling%s (%s, %s)", s->name, m, 100 * st->efficiency,
                 attn ? "gemm" : s->component, attn ? " of its dtype (no attention benchmark)" : "", c,
                 case_name(&g->ceilings->cases[st->match]));
    }
}

/* Memory-bound kernels against the membw ceiling, when the trace recorded
 * the shapes their bytes follow from. */
/* Why the largest time-only stage of GPU kernels of one kind (tensor: the
 * GEMM/conv/attention stages; else the memory-bound ones and "other
 * compute") has no FLOPs or bytes: the stage's own hint (gap.c's
 * bound_hint, from the trace reader's "unattributed"), its "FLOPs unknown:
 * "/"bytes unknown: " left out; NULL when it has none. A CUDA-graph replay
 * recorded with record_shapes=True was told to record shapes, while its
 * stages said the graph's ops ran at capture. */
static const char *unshaped_reason(const mb_gap *g, bool tensor)
{
    const mb_gap_stage *top = NULL;
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        const char *c = s->component;
        bool kind = tensor ? strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0 || strcmp(c, "attention") == 0
                           : strcmp(c, "membw") == 0 || strcmp(s->name, "other compute") == 0;
        bool on_cpu = s->device && strcmp(s->device, "cpu") == 0;
        bool said = strncmp(st->bound_hint, "FLOPs unknown: ", 15) == 0 ||
                    strncmp(st->bound_hint, "bytes unknown: ", 15) == 0;
        if (kind && !on_cpu && strcmp(s->work_unit, "s") == 0 && said &&
            (top == NULL || mb_stage_exposed(s) > mb_stage_exposed(top->stage)))
            top = st;
    }
    return top ? top->bound_hint + 15 : NULL;
}

/* Why a kind of GPU kernel has no rate: the stages' own reason, else shapes
 * not recorded. */
static void no_rate_evidence(builder *b, const mb_gap *g, bool tensor)
{
    const char *why = unshaped_reason(g, tensor);
    if (why && tensor)
        EVIDENCE(b, "no FLOP/s against the GEMM/conv ceilings: %s", why);
    else if (why)
        EVIDENCE(b, "memory-bound kernels: time only: %s", why);
    else if (tensor)
        EVIDENCE(b, "no FLOP/s against the GEMM/conv ceilings: shapes not recorded (profile with "
                    "record_shapes=True)");
    else
        EVIDENCE(b, "memory-bound kernels: shapes not recorded: time only (profile with record_shapes=True for "
                    "bytes/s against the membw ceiling)");
}

static void memory_evidence(builder *b, const mb_gap *g, const mb_diag_figures *f)
{
    char cover[96] = "";
    if (f->memory_shaped_share >= 0)
        snprintf(cover, sizeof cover, " (%.0f%% of their time has recorded shapes)", 100 * f->memory_shaped_share);
    if (f->memory_rate < 0) {
        no_rate_evidence(b, g, false);
        return;
    }
    /* a lower bound, but where the kernels move more than the bandwidth itself allows: then some bytes came from
     * cache, or an op read part of an argument its record holds whole (nano-vllm's compiled RoPE kernels, a 21-MB
     * table of which they index 3 rows: "4.27 TB/s ... bytes are a lower bound") */
    const char *counted = f->memory_bandwidth > 0 && f->memory_rate > f->memory_bandwidth
                              ? "bytes as counted (inputs read once, one output written) are more than that bandwidth "
                                "moves in their time: some came from cache, or an op read part of an input its record "
                                "holds whole (an index into a table)"
                              : "bytes are a lower bound (inputs read once, one output written)";
    if (f->memory_ceiling > 0 && f->memory_bandwidth > f->memory_ceiling * 1.0005)
        EVIDENCE(b, "memory-bound kernels move %.4g GB/s, %.0f%% of their ceiling %.4g GB/s: the measured memory "
                    "bandwidth %.4g GB/s (%s) with the GPU's least time per kernel%s; %s",
                 f->memory_rate / 1e9, 100 * f->memory_efficiency, f->memory_ceiling / 1e9,
                 f->memory_bandwidth / 1e9, f->memory_ceiling_label ? f->memory_ceiling_label : "membw", cover,
                 counted);
    else if (f->memory_ceiling > 0)
        EVIDENCE(b, "memory-bound kernels move %.4g GB/s, %.0f%% of the measured memory bandwidth ceiling %.4g GB/s "
                    "(%s)%s; %s",
                 f->memory_rate / 1e9, 100 * f->memory_efficiency, f->memory_ceiling / 1e9,
                 f->memory_ceiling_label ? f->memory_ceiling_label : "membw", cover, counted);
    else if (f->memory_bandwidth > 0)
        EVIDENCE(b, "memory-bound kernels move %.4g GB/s, faster than the measured memory bandwidth %.4g GB/s "
                    "(%s)%s; %s",
                 f->memory_rate / 1e9, f->memory_bandwidth / 1e9,
                 f->memory_ceiling_label ? f->memory_ceiling_label : "membw", cover, counted);
    else
        EVIDENCE(b, "memory-bound kernels move %.4g GB/s%s; no membw ceiling measured to hold it against",
                 f->memory_rate / 1e9, cover);
}

/* A kind of kernel the step table counts apart (step.layout_conversions,
 * fp32_math, small_grids): what they are, how many a step, their time and
 * share, said from `min` of the step; `tail` adds to the line. */
static void kernel_figure(builder *b, const mb_diag_figures *f, const char *what, double kernels, double secs,
                          double share, double min, const char *tail)
{
    char p1[32], t[32];
    if (!(share >= min && share > 0 && secs > 0))
        return;
    mb_fmt_seconds(t, sizeof t, secs);
    EVIDENCE(b, "%s: %.0f a %s, %s, %s of the %s%s", what, kernels, f->span, t, pct(p1, sizeof p1, share), f->span,
             tail);
}

/* cuDNN's conversions of an NCHW model's tensors to NHWC and back (time
 * channels_last saves); GEMMs and convolutions in fp32 on the CUDA cores,
 * by their kernels' names; kernels on fewer thread blocks than half the
 * GPU's SMs, the rest of the GPU idle while they run, whatever their
 * efficiency against a ceiling. */
static void kernel_figures(builder *b, const mb_diag_figures *f, const th *x)
{
    kernel_figure(b, f, "cuDNN converts tensors between NCHW and NHWC around the convolutions (nchwToNhwc/nhwcToNchw "
                        "kernels)", f->layout_kernels, f->layout_s, f->layout_share, x->gcb_layout, "");
    kernel_figure(b, f, "GEMM and convolution kernels in fp32 on the CUDA cores, no tensor core (sgemm, scudnn in "
                        "their names)", f->fp32_math_kernels, f->fp32_math_s, f->fp32_math_share, x->gcb_fp32, "");
    if (f->sms <= 0)
        return;
    char what[128], tail[160] = "", big[32];
    snprintf(what, sizeof what, "kernels on fewer thread blocks than half the GPU's %.0f SMs, the other SMs idle while "
                                "they run", f->sms);
    if (f->small_grid_largest) {
        mb_fmt_seconds(big, sizeof big, f->small_grid_largest_s);
        snprintf(tail, sizeof tail, "; the most time of them in the trace: %s, %s", f->small_grid_largest, big);
    }
    kernel_figure(b, f, what, f->small_grid_kernels, f->small_grid_s, f->small_grid_share, x->gcb_small, tail);
}

static void try_gpu_compute(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32], p3[32], p4[32];
    char lim[LIMIT_LEN];
    if (f->step_table) {
        if (!passes(f->compute_share, x->gcb_share, x) || !begin_finding(b, "gpu_compute_bound", f->compute_share, r))
            return;
        /* both kinds with their shares, the larger first: the finding's own
         * share (every kernel) is never read as the larger kind's */
        bool memory = f->memory_share > f->tensor_share;
        snprintf(b->cur->title + strlen(b->cur->title), sizeof b->cur->title - strlen(b->cur->title),
                 " (%s %s, %s %s)", memory ? "memory-bound kernels" : "matrix math",
                 pct(p1, sizeof p1, memory ? f->memory_share : f->tensor_share),
                 memory ? "matrix math" : "memory-bound kernels",
                 pct(p2, sizeof p2, memory ? f->tensor_share : f->memory_share));
        EVIDENCE(b, "GPU kernels run %s of the %s (%s): matrix math (GEMM, convolution, attention) "
                    "%s, memory-bound kernels (elementwise, normalization, reduction, optimizer) %s",
                 pct(p1, sizeof p1, f->compute_share), f->span,
                 limit(lim, sizeof lim, f->compute_share, x->gcb_share, x),
                 pct(p3, sizeof p3, f->tensor_share), pct(p4, sizeof p4, f->memory_share));
        if (f->tensor_efficiency >= 0 && f->tensor_beyond_s > 0) {
            /* the FLUX.1 trace on an MI300X: its GEMMs and convolutions past the H100's cases, its attention
             * (1.8% of that time) at 4%, read "the GEMM/conv/attention work ... runs at 4%" */
            EVIDENCE(b, "the GEMM/conv/attention work with recorded shapes held to a ceiling, %s of it by time, "
                        "runs at %.0f%% of the measured GEMM/conv ceilings (time-weighted); the rest runs faster than "
                        "its nearest measured case, which is no ceiling for it",
                     pct(p1, sizeof p1, f->tensor_held_s / (f->tensor_held_s + f->tensor_beyond_s)),
                     100 * f->tensor_efficiency);
            flop_evidence(b, g);
        } else if (f->tensor_efficiency >= 0) {
            EVIDENCE(b, "the GEMM/conv/attention work with recorded shapes runs at %.0f%% of the measured GEMM/conv "
                        "ceilings (time-weighted)",
                     100 * f->tensor_efficiency);
            flop_evidence(b, g);
        }
        else if (f->tensor_share > 0) /* only where there is GEMM/conv time to say it of */
            no_rate_evidence(b, g, true);
        if (f->tensor_bytes_s > 0 && f->tensor_all_s > 0)
            EVIDENCE(b, "of the matrix math, %s by time is memory-bound products (%.1f FLOP a byte): held to the "
                        "bytes they move at the memory ceiling, which takes longer than their FLOPs at the GEMM case's "
                        "rate",
                     pct(p1, sizeof p1, f->tensor_bytes_s / f->tensor_all_s),
                     f->tensor_intensity);
        memory_evidence(b, g, f);
        kernel_figures(b, f, x);
        if (f->gpu_util >= 0)
            EVIDENCE(b, "GPU busy %s of the %s in all", pct(p1, sizeof p1, f->gpu_util), f->span);
        add_remedies(b, r, f, x);
        return;
    }
    bool by_util = f->gpu_util >= x->gcb_util;
    /* a measured utilization below the threshold outweighs stage shares */
    bool by_share = f->gpu_util < 0 && passes(f->compute_share, x->gcb_share, x);
    if (!by_util && !by_share)
        return;
    if (!begin_finding(b, "gpu_compute_bound", by_util ? f->gpu_util : f->compute_share, r))
        return;
    if (by_util)
        EVIDENCE(b, "GPU busy %s of the time (threshold %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->gcb_util));
    if (by_share)
        EVIDENCE(b, "GEMM/conv/memory-bound GPU work: %s of the %s (%s)", pct(p1, sizeof p1, f->compute_share),
                 f->span, limit(lim, sizeof lim, f->compute_share, x->gcb_share, x));
    else
        EVIDENCE(b, "GEMM/conv/memory-bound GPU work: %s of the %s", pct(p1, sizeof p1, f->compute_share), f->span);
    if (f->compute_efficiency >= 0)
        EVIDENCE(b, "that work runs at %.0f%% of the measured ceilings (time-weighted)", 100 * f->compute_efficiency);
    add_remedies(b, r, f, x);
}

/* The CPU stages behind the CPU share, largest first as the gap lists them,
 * and those with FLOPs against the CPU GEMM/conv ceilings. */
static void cpu_stage_evidence(builder *b, const mb_gap *g, const mb_diag_figures *f)
{
    char list[400] = "";
    size_t at = 0;
    for (int k = 0; k < g->n; k++) {
        int i = g->headline ? g->headline[k] : k;
        const mb_stage *s = g->stages[i].stage;
        bool on_cpu = s->device && strcmp(s->device, "cpu") == 0;
        bool op_role = !s->role || role_is(s, "compute") || role_is(s, "optimizer");
        if (!on_cpu || comm_stage(s) || !op_role || at + strlen(s->name) + 16 >= sizeof list)
            continue;
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s %.1f%%", at ? ", " : "", s->name,
                               100 * g->stages[i].share);
    }
    if (at)
        EVIDENCE(b, "%s: %s", f->gpus_unrecorded > 0 ? "on the host's timeline" : "on the CPU", list);
    if (f->cpu_python_one_block) {
        char py[32], block[32];
        mb_fmt_seconds(py, sizeof py, f->cpu_python_s);
        mb_fmt_seconds(block, sizeof block, f->cpu_python_block_s);
        bool steps = strcmp(f->span, "step") == 0;
        EVIDENCE(b, "Python and other host code: %s a %s, %s of it in one stretch with no op (%s)", py, f->span, block,
                 steps ? "each step's longest, on average" : "the run's longest");
    } else if (f->cpu_python_blocks) {
        char py[32], blocks[32], longest[32];
        mb_fmt_seconds(py, sizeof py, f->cpu_python_s);
        mb_fmt_seconds(blocks, sizeof blocks, f->cpu_python_long_s);
        mb_fmt_seconds(longest, sizeof longest, f->cpu_python_block_s);
        EVIDENCE(b, "Python and other host code: %s a %s, %s of it in stretches of 1 ms or more with no op (%.3g a %s, "
                    "the longest %s%s)", py, f->span, blocks, f->cpu_python_long_n, f->span, longest,
                 strcmp(f->span, "step") == 0 ? " on average" : "");
    }
    if (f->cpu_python_range) {
        char in[32];
        mb_fmt_seconds(in, sizeof in, f->cpu_python_range_s);
        EVIDENCE(b, "%s a %s of those stretches lie in the loop's own range '%.80s' (a record_function)", in, f->span,
                 f->cpu_python_range);
    }
    if (f->cpu_dense_embedding) {
        char emb[32];
        mb_fmt_seconds(emb, sizeof emb, f->cpu_dense_embedding_s);
        EVIDENCE(b, "an embedding's dense backward (a gradient the size of its table, zeroed and filled): %s a %s, "
                    "%.1f%% of it", emb, f->span, 100 * f->cpu_dense_embedding_share);
    }
    flop_evidence(b, g);
}

static void try_cpu_compute(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32], p2[32];
    char lim[LIMIT_LEN];
    if (f->step_table) {
        /* GPU idle while the host runs its own code, without the host-overhead
         * signature (that one is launch_bound) */
        if (host_overhead_signature(f, x) || !passes(f->host_idle_share, x->cc_share, x) ||
            !begin_finding(b, "cpu_compute_bound", f->host_idle_share, r))
            return;
        EVIDENCE(b, "GPU idle while the host runs framework/Python code outside launch, sync and DataLoader calls: "
                    "%s of the %s (%s)",
                 pct(p1, sizeof p1, f->host_idle_share), f->span,
                 limit(lim, sizeof lim, f->host_idle_share, x->cc_share, x));
        kernel_evidence(b, f, x);
        add_remedies(b, r, f, x);
        return;
    }
    bool by_share = passes(f->cpu_share, x->cc_share, x);
    bool by_util = f->cpu_util >= x->cc_cpu && f->gpu_util >= 0 && f->gpu_util <= x->cc_gpu &&
                   f->launch_share <= x->cc_launch;
    if (!by_share && !by_util)
        return;
    if (!begin_finding(b, "cpu_compute_bound", by_share ? f->cpu_share : 1 - f->gpu_util, r))
        return;
    /* ops that ran on a GPU the trace did not record read as the host's time: no CPU bound to name */
    const char *unrecorded = f->gpus_unrecorded > 0 ? mb_ini_get(r, "cpu_compute_bound", "title.gpu_unrecorded") : NULL;
    /* one stretch with no op holds most of the host's time: Python, or a wait the trace does not show (a step
     * blocked on a producer's queue and a sleep, 3.5 ms of CPU in a 12.4 ms step, read "CPU compute bound") */
    const char *block = !unrecorded && cpu_python_leads(f) && f->cpu_python_blocks
                            ? mb_ini_get(r, "cpu_compute_bound", "title.host_block") : NULL;
    if (unrecorded || block)
        snprintf(b->cur->title, sizeof b->cur->title, "%s", unrecorded ? unrecorded : block);
    if (by_share)
        EVIDENCE(b, "%s takes %s of the %s (%s)",
                 unrecorded ? "the ops' time on the host"
                 : f->cpu_only ? "the CPU's side (its ops, and Python or waiting between them)" : "compute on the CPU",
                 pct(p1, sizeof p1, f->cpu_share), f->span,
                 limit(lim, sizeof lim, f->cpu_share, x->cc_share, x));
    if (f->cpu_util >= 0)
        EVIDENCE(b, "CPU busy %s (threshold %s)", pct(p1, sizeof p1, f->cpu_util), pct(p2, sizeof p2, x->cc_cpu));
    if (f->gpu_util >= 0)
        EVIDENCE(b, "GPU busy %s (CPU bound below %s)", pct(p1, sizeof p1, f->gpu_util),
                 pct(p2, sizeof p2, x->cc_gpu));
    if (f->gpu_util >= 0 || f->launches > 0)
        EVIDENCE(b, "kernel launches: %s of the %s", pct(p1, sizeof p1, f->launch_share), f->span);
    cpu_stage_evidence(b, g, f);
    if (f->torch_threads > 0 && f->cpus_allowed > 0) {
        int ranks = f->host_ranks > 0 ? f->host_ranks : 1;
        char on[48] = "";
        if (ranks > 1)
            snprintf(on, sizeof on, " x %d ranks on this machine", ranks);
        EVIDENCE(b, "torch threads: %d%s%s, on %d CPU%s it may use%s", f->torch_threads, ranks > 1 ? " per rank" : "",
                 on, f->cpus_allowed, f->cpus_allowed == 1 ? "" : "s",
                 cpus_all_busy(f) ? ": every CPU has a thread" : "");
    }
    cpus_busy_evidence(b, f);
    add_remedies(b, r, f, x);
}

/* A stage's calls, per step where the run has steps (the times beside them are): "404 calls a step"; "10
 * calls" in a run without (HTA's V100 DDP trace read "2020 calls, 71.5 ms per step" for 404 a step) */
static const char *calls_words(char *buf, size_t len, const mb_gap *g, long long count)
{
    double n = g->steps_known ? mb_gap_per_step(g, (double)count) : (double)count;
    snprintf(buf, len, "%.4g call%s%s", n, n == 1 ? "" : "s", g->steps_known ? " a step" : "");
    return buf;
}

/* Copy stages: calls, size per call (small copies cost their latency) and
 * the rate against the matched copy ceiling. */
static void copy_evidence(builder *b, const mb_gap *g)
{
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        if (strcmp(s->component, "copy") != 0 || !s->direction || strcmp(s->direction, "d2d") == 0)
            continue;
        char each[64] = "size unknown", calls[48];
        if (strcmp(s->work_unit, "byte") == 0 && s->count > 0)
            snprintf(each, sizeof each, "%.4g KiB per call", s->work / (double)s->count / 1024);
        calls_words(calls, sizeof calls, g, s->count);
        if (st->beyond[0])
            EVIDENCE(b, "%s: %s, %s, %.4g GB/s, %s", s->name, calls, each, st->measured_rate / 1e9, st->beyond);
        else if (st->match >= 0)
            EVIDENCE(b, "%s: %s, %s, %.4g GB/s = %.0f%% of the measured copy ceiling", s->name, calls, each,
                     st->measured_rate / 1e9, 100 * st->efficiency);
        else
            EVIDENCE(b, "%s: %s, %s", s->name, calls, each);
    }
}

/* Each collective stage: its time and share, calls, size per call, ranks,
 * and its bus bandwidth against the matched all-reduce (etc.) ceiling. */
static void comm_evidence(builder *b, const mb_gap *g)
{
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        if (!comm_stage(s))
            continue;
        char t[96], size[64] = "", ranks[32] = "", rate[MB_GAP_WHY_LEN + 160], bw[32], cbw[32], flight[32];
        mb_fmt_seconds(t, sizeof t, mb_gap_per_step(g, st->exposed));
        if (st->exposed < 0.99 * s->seconds) { /* overlapped (DDP's buckets beside the backward): both figures */
            mb_fmt_seconds(flight, sizeof flight, mb_gap_per_step(g, s->seconds));
            snprintf(t + strlen(t), sizeof t - strlen(t), " exposed of %s in flight", flight);
        }
        bool bytes = strcmp(s->work_unit, "byte") == 0 && s->seconds > 0;
        if (bytes && s->count > 0)
            snprintf(size, sizeof size, ", %.4g MiB per call", s->work / (double)s->count / (1 << 20));
        if (s->ranks > 0)
            snprintf(ranks, sizeof ranks, ", %d ranks", s->ranks);
        mb_collective kind;
        double f = 0;
        if (bytes && mb_coll_from_name(s->component, &kind))
            f = mb_busbw_factor(kind, s->ranks);
        mb_fmt_rate(bw, sizeof bw, st->measured_rate * (f > 0 ? f : 1), "byte");
        mb_fmt_rate(cbw, sizeof cbw, st->ceiling_rate * f, "byte");
        /* the stage table's rate is the algorithm bandwidth: named beside the bus bandwidth (an 8-MI300X bf16
         * all-reduce read 1.49 GB/s in the table, 2.6 GB/s here, neither named) */
        char alg[48];
        mb_fmt_rate(alg, sizeof alg, st->measured_rate, "byte");
        if (!bytes)
            snprintf(rate, sizeof rate, "size not recorded: time only");
        else if (f <= 0)
            snprintf(rate, sizeof rate, "%s algorithm bandwidth (no bus bandwidth without the rank count)", bw);
        else if (st->beyond[0])
            snprintf(rate, sizeof rate, "algbw %s, busbw %s, %s", alg, bw, st->beyond);
        else if (st->match >= 0 && st->ceiling_rate > 0)
            snprintf(rate, sizeof rate, "algbw %s, busbw %s, %.0f%% of the measured %s ceiling (busbw %s, %s)", alg,
                     bw, 100 * st->efficiency, s->component, cbw, case_name(&g->ceilings->cases[st->match]));
        else
            snprintf(rate, sizeof rate, "algbw %s, busbw %s; %s", alg, bw, st->why);
        char calls[48];
        const char *unit = g->steps_known ? "step" : "run";
        EVIDENCE(b, "%s: %s, %s per %s (%.1f%% of the %s)%s%s: %s", s->name,
                 calls_words(calls, sizeof calls, g, s->count), t, unit, 100 * st->share, unit, size, ranks, rate);
    }
}

static void try_share(builder *b, const mb_gap *g, const char *id, const char *what, double share, double min,
                      const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32];
    char lim[LIMIT_LEN];
    if (!passes(share, min, x) || !begin_finding(b, id, share, r))
        return;
    EVIDENCE(b, "%s take %s of the %s (%s)", what, pct(p1, sizeof p1, share), f->span,
             limit(lim, sizeof lim, share, min, x));
    if (strcmp(id, "copy_bound") == 0 && f->pageable_share > 0)
        EVIDENCE(b, "copies from pageable memory: %s of the %s", pct(p1, sizeof p1, f->pageable_share), f->span);
    if (strcmp(id, "copy_bound") == 0)
        copy_evidence(b, g);
    if (strcmp(id, "communication_bound") == 0)
        comm_evidence(b, g);
    add_remedies(b, r, f, x);
}

/* The stages behind a share, "checkpoint_save 75.0%, ...", for evidence. */
static void stages_with(builder *b, const mb_gap *g, bool (*pick)(const mb_stage *, const char *),
                        const char *names, const char *lead)
{
    char list[400] = "";
    size_t at = 0;
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        if (!pick(s, names) || at + strlen(s->name) + 16 >= sizeof list)
            continue;
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s %.1f%%", at ? ", " : "", s->name,
                               100 * g->stages[i].share);
    }
    if (at)
        EVIDENCE(b, "%s: %s", lead, list);
}

static bool unattributed_stage(const mb_stage *s, const char *data_names)
{
    return strcmp(s->component, "other") == 0 && s->role == NULL && !(s->device && strcmp(s->device, "cpu") == 0) &&
           !data_by_name(s, data_names);
}

static bool periodic_stage(const mb_stage *s, const char *data_names)
{
    (void)data_names;
    return is_periodic(s);
}

/* Checkpoints, evaluation, logging (the stage's role says so). */
static void try_periodic(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x, const mb_ini *r)
{
    char p1[32];
    char lim[LIMIT_LEN];
    if (!passes(f->periodic_share, x->pw_share, x) ||
        !begin_finding(b, "periodic_work_bound", f->periodic_share, r))
        return;
    EVIDENCE(b, "stages with role checkpoint, eval or logging take %s of the %s (%s)",
             pct(p1, sizeof p1, f->periodic_share), f->span,
             limit(lim, sizeof lim, f->periodic_share, x->pw_share, x));
    stages_with(b, g, periodic_stage, NULL, "the stages");
    add_remedies(b, r, f, x);
}

/* Time in 'other' stages that say neither role nor device: no pattern can
 * explain it; when it is most of the run, that is the finding, not
 * "balanced". */
static void try_unattributed(builder *b, const mb_gap *g, const mb_diag_figures *f, const th *x,
                             const mb_ini *r)
{
    char p1[32];
    if (f->step_table || !(f->unattributed_share > x->dominant) ||
        !begin_finding(b, "unattributed_time", f->unattributed_share, r))
        return;
    EVIDENCE(b, "'other' stages with no role take %s of the run: no pattern covers them",
             pct(p1, sizeof p1, f->unattributed_share));
    stages_with(b, g, unattributed_stage, x->data_names, "the stages");
    add_remedies(b, r, f, x);
}

/* A note for each stage counted as data loading because of its name. */
static void name_hint_notes(builder *b, const mb_gap *g, const mb_ini *t)
{
    const char *names = mb_ini_get(t, "data_loading_bound", "names");
    for (int i = 0; i < g->n; i++) {
        const mb_stage *s = g->stages[i].stage;
        if (data_by_name(s, names))
            push_str(b, &b->d->notes, &b->d->n_notes,
                     "%s: counted as data loading from its name alone (a hint: the stage has no role); give it "
                     "\"role\": \"data\" to confirm, or another role (checkpoint, eval, logging)",
                     s->name);
    }
}

/* Whether a stage is behind a finding: the stages each pattern's share is
 * made of. */
static bool stage_behind(const char *id, const mb_stage *s, const char *data_names)
{
    const char *c = s->component;
    bool on_cpu = s->device && strcmp(s->device, "cpu") == 0;
    bool data = is_data_stage(s, data_names);
    if (strcmp(id, "data_loading_bound") == 0)
        return data;
    if (data || is_periodic(s))
        return strcmp(id, "periodic_work_bound") == 0 && is_periodic(s);
    if (strcmp(id, "communication_bound") == 0)
        return comm_stage(s);
    if (comm_stage(s))
        return false;
    if (strcmp(id, "launch_bound") == 0) /* the host's launch overhead and the GPU's between queued kernels */
        return strcmp(c, "launch") == 0 || (on_cpu && strcmp(c, "other") == 0) || role_is(s, "overhead");
    if (strcmp(id, "sync_bound") == 0)
        return strcmp(c, "sync") == 0;
    if (strcmp(id, "gpu_compute_bound") == 0)
        return !on_cpu && (strcmp(c, "gemm") == 0 || strcmp(c, "conv") == 0 || strcmp(c, "attention") == 0 ||
                           strcmp(c, "membw") == 0 ||
                           (strcmp(c, "other") == 0 && !role_is(s, "overhead")));
    if (strcmp(id, "cpu_compute_bound") == 0)
        return on_cpu;
    if (strcmp(id, "copy_bound") == 0)
        return strcmp(c, "copy") == 0 && s->direction && strcmp(s->direction, "d2d") != 0;
    if (strcmp(id, "unattributed_time") == 0)
        return unattributed_stage(s, data_names);
    return false;
}

/* A trace's host time holds the profiler's own (it records every op, with
 * its shapes when asked): a host-bound reading of it is an upper bound until
 * the loop's own step (--step-ms) says how much. The step without the
 * profiler lies between the GPU's time (its busy time and kernel wait: the
 * host keeping up) and the traced step. */
static void upper_bound_note(mb_diagnosis *d, const mb_gap *g)
{
    const cJSON *ev = g->run->evidence;
    const cJSON *step = ev ? cJSON_GetObjectItemCaseSensitive(ev, "step") : NULL;
    const char *id = d->n > 0 ? d->findings[0].id : "";
    double ops = d->fig.ops_per_step, busy = ev_num(step, "gpu_busy_share"), t = ev_num(step, "seconds");
    if (!cJSON_IsObject(step) || cJSON_GetObjectItemCaseSensitive(step, "step_given") || busy < 0 || t <= 0 ||
        ops <= 0 || (strcmp(id, "launch_bound") != 0 && strcmp(id, "cpu_compute_bound") != 0))
        return;
    char lo[32], hi[32];
    mb_fmt_seconds(lo, sizeof lo, (busy + d->fig.queued_share) * t); /* kernel wait is the GPU's own */
    mb_fmt_seconds(hi, sizeof hi, t);
    /* no ProfilerStep: the trace's span is one window, a run, not a step */
    const char *window = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "window"));
    bool run = window && strcmp(window, "trace") == 0;
    const char *unit = run ? "run" : "step";
    snprintf(d->bottleneck_note, sizeof d->bottleneck_note,
             "an upper bound: the trace's host time includes the profiler's own, %.0f ops per %s recorded; without "
             "it the %s lies between %s (the GPU's busy time%s, the host keeping up) and %s; %s`--step-ms MS` with "
             "the loop's step timed without the profiler %s it",
             ops, unit, unit, lo, d->fig.queued_share > 0 ? " and kernel wait" : "", hi,
             run ? "steps in the trace (prof.step()) and " : "",
             run ? "settle" : "settles");
}

/* The one bottleneck: the primary finding, its share and its largest stage;
 * without a finding, "balanced" and the largest stage. */
static void name_bottleneck(mb_diagnosis *d, const mb_gap *g, const mb_ini *t)
{
    const char *data_names = mb_ini_get(t, "data_loading_bound", "names");
    const mb_finding *f = d->n > 0 ? &d->findings[0] : NULL;
    d->bottleneck_stage = g->bottleneck;
    snprintf(d->bottleneck, sizeof d->bottleneck, "%s", f ? f->title : "balanced");
    d->bottleneck_share = f ? f->weight : g->stages[g->bottleneck].share;
    int best = -1;
    for (int i = 0; f && i < g->n; i++)
        if (stage_behind(f->id, g->stages[i].stage, data_names) &&
            (best < 0 || g->stages[i].exposed > g->stages[best].exposed))
            best = i;
    if (best >= 0)
        d->bottleneck_stage = best;
    upper_bound_note(d, g);
}

static int cmp_weight(const void *a, const void *b)
{
    double x = ((const mb_finding *)a)->weight, y = ((const mb_finding *)b)->weight;
    return (x < y) - (x > y);
}

/* No finding: say with the shares why the run counts as balanced. */
static void balanced_line(mb_diagnosis *d, const th *x)
{
    const mb_diag_figures *f = &d->fig;
    char *o = d->balanced;
    size_t n = sizeof d->balanced;
    int w = snprintf(o, n, "balanced: no pattern reaches its threshold and none explains more than %.0f%% of the %s "
                           "(GPU compute %.1f%%",
                     100 * x->dominant, f->span, 100 * f->compute_share);
    if (f->step_table)
        w += snprintf(o + w, n - (size_t)w, ", host overhead %.1f%%",
                      100 * (f->launch_idle_share + f->host_idle_share));
    else
        w += snprintf(o + w, n - (size_t)w, ", launch %.1f%%", 100 * f->launch_share);
    if (f->queued_share > 0)
        w += snprintf(o + w, n - (size_t)w, ", kernel wait %.1f%%", 100 * f->queued_share);
    snprintf(o + w, n - (size_t)w, ", data %.1f%%, sync %.1f%%, copies %.1f%%, collectives %.1f%%)",
             100 * f->data_share, 100 * f->sync_share, 100 * f->copy_share, 100 * f->comm_share);
}

int mb_diagnose(const mb_gap *g, const mb_ini *thresholds, const mb_ini *remedies, mb_diagnosis *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    th x;
    if (load_thresholds(thresholds, &x, err))
        return err->code;
    mb_diag_figures_compute(g, thresholds, &out->fig);
    const mb_diag_figures *f = &out->fig;
    builder b = { .d = out };
    try_data(&b, g, f, &x, remedies);
    try_launch(&b, f, &x, remedies);
    try_sync(&b, f, &x, remedies);
    try_setup(&b, g, f, &x, remedies);
    try_gpu_compute(&b, g, f, &x, remedies);
    try_cpu_compute(&b, g, f, &x, remedies);
    try_share(&b, g, "copy_bound", "host<->device copies", f->copy_share, x.cp_share, f, &x, remedies);
    try_share(&b, g, "communication_bound", "collectives", f->comm_share, x.cm_share, f, &x, remedies);
    try_periodic(&b, g, f, &x, remedies);
    try_unattributed(&b, g, f, &x, remedies);
    name_hint_notes(&b, g, thresholds);
    if (b.oom) {
        mb_diagnosis_free(out);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    if (out->n > 1)
        qsort(out->findings, (size_t)out->n, sizeof *out->findings, cmp_weight);
    out->runner_up = out->n > 1 && out->findings[1].weight >= x.runner_up * out->findings[0].weight;
    if (out->n == 0)
        balanced_line(out, &x);
    name_bottleneck(out, g, thresholds);
    return MB_OK;
}

void mb_diagnosis_free(mb_diagnosis *d)
{
    if (d == NULL)
        return;
    for (int i = 0; i < d->n; i++) {
        mb_finding *f = &d->findings[i];
        for (int j = 0; j < f->n_evidence; j++)
            free(f->evidence[j]);
        for (int j = 0; j < f->n_remedies; j++)
            free(f->remedies[j]);
        free(f->evidence);
        free(f->remedies);
    }
    free(d->findings);
    for (int i = 0; i < d->n_notes; i++)
        free(d->notes[i]);
    free(d->notes);
    memset(d, 0, sizeof *d);
}
