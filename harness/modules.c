/* modules.c: loading the GPU backends at run time.
 *
 * Why dlopen: a binary linked directly against libcudart, cuBLAS, cuDNN and
 * NCCL does not start at all on a machine that lacks one of them, and maps
 * 200+ MB of libraries even for `mlbench gap`. Loading per library family on
 * first use keeps every other component running and turns a missing library
 * into a `skipped` case carrying the loader's own message. */
#include "modules.h"

#include "gpu_hooks.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES 16

/* What a module provides, known without loading it, so a module that cannot
 * be loaded still lists its backends (and suites naming them still load). */
typedef struct entry_info {
    const char *component, *backend, *work_unit, *rate_unit;
    double rate_scale;
    bool latency_first, collective;
} entry_info;

typedef struct module {
    const char *file;   /* libmlbench_cuda.so */
    const char *symbol; /* mb_module_cuda_ops */
    bool built;         /* the build produced it */
    const char *not_built_why;
    entry_info entries[MAX_ENTRIES];
    /* run time */
    bool tried;
    void *handle;
    char why[768];
    mb_component_ops placeholders[MAX_ENTRIES];
} module;

#ifdef MB_CUDA_MODULES
#define CUDA_BUILT true
#else
#define CUDA_BUILT false
#endif
#ifdef MB_CUDNN_MODULE
#define CUDNN_BUILT true
#else
#define CUDNN_BUILT false
#endif
#ifdef MB_NCCL_MODULE
#define NCCL_BUILT true
#else
#define NCCL_BUILT false
#endif

static module modules[] = {
    { .file = "libmlbench_cuda.so", .symbol = "mb_module_cuda_ops", .built = CUDA_BUILT,
      .not_built_why = "CUDA toolkit not found at build time",
      .entries = { { "copy", "cuda", "byte", "GB/s", 1e9, false, false },
        { "membw", "cuda", "byte", "GB/s", 1e9, false, false },
        { "peak", "cuda", "flop", "TFLOP/s", 1e12, false, false },
        { "launch", "cuda", "op", "Mop/s", 1e6, true, false },
        { "gemm", "cublaslt", "flop", "TFLOP/s", 1e12, false, false },
        { "gemm", "cublas", "flop", "TFLOP/s", 1e12, false, false } } },
    { .file = "libmlbench_cudnn.so", .symbol = "mb_module_cudnn_ops", .built = CUDNN_BUILT,
      .not_built_why = "cuDNN not found at build time",
      .entries = { { "conv", "cudnn", "flop", "TFLOP/s", 1e12, false, false } } },
    { .file = "libmlbench_nccl.so", .symbol = "mb_module_nccl_ops", .built = NCCL_BUILT,
      .not_built_why = "NCCL not found at build time",
      .entries = { { "allreduce", "nccl", "byte", "GB/s", 1e9, false, true },
        { "allgather", "nccl", "byte", "GB/s", 1e9, false, true },
        { "reducescatter", "nccl", "byte", "GB/s", 1e9, false, true },
        { "broadcast", "nccl", "byte", "GB/s", 1e9, false, true } } },
};
#define N_MODULES (sizeof modules / sizeof modules[0])

/* One probe per module: the ops table has no context pointer. */
static int probe_module(int m, mb_err *why)
{
    return mb_errf(why, MB_ESKIP, "%s", modules[m].why);
}
static int probe_cuda(const mb_params *p, mb_err *why)
{
    (void)p;
    return probe_module(0, why);
}
static int probe_cudnn(const mb_params *p, mb_err *why)
{
    (void)p;
    return probe_module(1, why);
}
static int probe_nccl(const mb_params *p, mb_err *why)
{
    (void)p;
    return probe_module(2, why);
}
static int (*const probes[])(const mb_params *, mb_err *) = { probe_cuda, probe_cudnn, probe_nccl };

static const mb_param_spec NO_PARAMS[] = { MB_PARAM_END };

/* The directory of libmlbench.so itself: the modules are installed beside
 * it (build tree and `cmake --install` alike). */
static void module_dir(char *buf, size_t len)
{
    const char *env = getenv("MLBENCH_MODULE_DIR");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return;
    }
    Dl_info info;
    buf[0] = '\0';
    if (dladdr((void *)module_dir, &info) && info.dli_fname) {
        snprintf(buf, len, "%s", info.dli_fname);
        char *slash = strrchr(buf, '/');
        if (slash)
            *slash = '\0';
        else
            buf[0] = '\0';
    }
}

static void make_placeholders(module *m, int index)
{
    for (int i = 0; i < MAX_ENTRIES && m->entries[i].component; i++) {
        const entry_info *e = &m->entries[i];
        m->placeholders[i] = (mb_component_ops){
            .component = e->component, .backend = e->backend, .summary = m->why,
            .work_unit = e->work_unit, .rate_unit = e->rate_unit, .rate_scale = e->rate_scale,
            .latency_first = e->latency_first, .collective = e->collective, .uses_gpu = true,
            .params = NO_PARAMS, .params_unknown = true, .probe = probes[index],
        };
    }
}

static void load(module *m, int index)
{
    if (m->tried)
        return;
    m->tried = true;
    if (!m->built) {
        snprintf(m->why, sizeof m->why, "not built in: %s", m->not_built_why);
        make_placeholders(m, index);
        return;
    }
    char dir[PATH_MAX], path[PATH_MAX + 64];
    module_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s%s%s", dir, dir[0] ? "/" : "", m->file);
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (m->handle == NULL) {
        const char *e = dlerror();
        snprintf(m->why, sizeof m->why, "cannot load %s: %s", m->file, e ? e : "unknown error");
        make_placeholders(m, index);
        return;
    }
    if (dlsym(m->handle, m->symbol) == NULL) {
        snprintf(m->why, sizeof m->why, "%.500s has no %s (mismatched build?)", path, m->symbol);
        dlclose(m->handle);
        m->handle = NULL;
        make_placeholders(m, index);
    }
}

size_t mb_modules_collect(const mb_component_ops **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < N_MODULES; i++) {
        module *m = &modules[i];
        load(m, (int)i);
        if (m->handle) {
            mb_module_ops_fn fn = (mb_module_ops_fn)dlsym(m->handle, m->symbol);
            size_t k = 0;
            const mb_component_ops *const *ops = fn(&k);
            for (size_t j = 0; j < k && n < cap; j++)
                out[n++] = ops[j];
        } else {
            for (int j = 0; j < MAX_ENTRIES && m->entries[j].component && n < cap; j++)
                out[n++] = &m->placeholders[j];
        }
    }
    return n;
}

void *mb_modules_cuda_symbol(const char *name, const char **why)
{
    load(&modules[0], 0);
    if (modules[0].handle == NULL) {
        if (why)
            *why = modules[0].why;
        return NULL;
    }
    void *sym = dlsym(modules[0].handle, name);
    if (sym == NULL && why)
        *why = "symbol missing in libmlbench_cuda.so";
    return sym;
}

/* ---- the harness's GPU hooks (gpu_hooks.h), forwarded to the module ------ */

void mb_gpu_context_add(cJSON *context)
{
    const char *why = NULL;
    void (*fn)(cJSON *) = (void (*)(cJSON *))mb_modules_cuda_symbol("mb_gpu_context_add_impl", &why);
    if (fn) {
        fn(context);
        return;
    }
    cJSON_AddArrayToObject(context, "gpus");
    cJSON_AddStringToObject(context, "gpu_unavailable", why ? why : "unknown");
}

void *mb_gpu_monitor_begin(void)
{
    void *(*fn)(void) = (void *(*)(void))mb_modules_cuda_symbol("mb_gpu_monitor_begin_impl", NULL);
    return fn ? fn() : NULL;
}

void mb_gpu_monitor_end(void *snapshot, mb_report *r)
{
    void (*fn)(void *, mb_report *) =
        (void (*)(void *, mb_report *))mb_modules_cuda_symbol("mb_gpu_monitor_end_impl", NULL);
    if (fn)
        fn(snapshot, r);
}

bool mb_gpu_read(mb_phase_reading *out)
{
    bool (*fn)(mb_phase_reading *) =
        (bool (*)(mb_phase_reading *))mb_modules_cuda_symbol("mb_gpu_read_impl", NULL);
    return fn ? fn(out) : false;
}

void mb_gpu_reasons_text(unsigned long long bits, char *buf, size_t len)
{
    void (*fn)(unsigned long long, char *, size_t) =
        (void (*)(unsigned long long, char *, size_t))mb_modules_cuda_symbol("mb_gpu_reasons_text_impl", NULL);
    if (fn)
        fn(bits, buf, len);
    else
        snprintf(buf, len, "unknown");
}
