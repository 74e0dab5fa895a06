/* modules.c: loading the GPU backends at run time.
 *
 * Why dlopen: a binary linked directly against libcudart, cuBLAS, cuDNN and
 * NCCL does not start at all on a machine that lacks one of them, and maps
 * 200+ MB of libraries even for `mlbench gap`. Loading per library family on
 * first use keeps every other component running and turns a missing library
 * into a `skipped` case carrying the loader's own message. */
#include "modules.h"

#include "backends.h"
#include "gpu_hooks.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A module: what its backends are is known without loading it (their
 * descriptions are in the core: kernels/shared/gpu_descriptions.c), so a module
 * that cannot be loaded still lists its backends and suites naming them
 * still load. */
typedef struct module {
    const char *file;   /* libmlbench_cuda.so */
    const char *symbol; /* mb_module_cuda_code */
    const char *abi;    /* mb_module_cuda_abi (MB_MODULE_ABI) */
    bool built;         /* the build produced it */
    const char *not_built_why;
    const mb_backend_desc *descriptions;
    /* run time */
    bool tried;
    void *handle;
    char why[768];
    mb_component_ops *ops; /* one per description: the module's or a placeholder */
    size_t n_ops;
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
    { .file = "libmlbench_cuda.so", .symbol = "mb_module_cuda_code", .abi = "mb_module_cuda_abi",
      .built = CUDA_BUILT,
      .not_built_why = "CUDA toolkit not found at build time", .descriptions = mb_cuda_backends },
    { .file = "libmlbench_cudnn.so", .symbol = "mb_module_cudnn_code", .abi = "mb_module_cudnn_abi",
      .built = CUDNN_BUILT,
      .not_built_why = "cuDNN not found at build time", .descriptions = mb_cudnn_backends },
    { .file = "libmlbench_nccl.so", .symbol = "mb_module_nccl_code", .abi = "mb_module_nccl_abi",
      .built = NCCL_BUILT,
      .not_built_why = "NCCL not found at build time", .descriptions = mb_nccl_backends },
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

/* Every backend of the module as a placeholder: its description, and a
 * probe that gives m->why. */
static void make_placeholders(module *m, int index)
{
    for (size_t i = 0; i < m->n_ops; i++) {
        const mb_backend_desc *d = &m->descriptions[i];
        mb_backend_code none = { .component = d->component, .backend = d->backend, .probe = probes[index],
                                 .unavailable = m->why };
        m->ops[i] = mb_backend_compose(d, &none);
    }
}

/* The module's code joined to the descriptions; MB_EUSAGE when they
 * disagree (a module from another build, a backend added on one side). */
static int compose_loaded(module *m, mb_module_code_fn fn, mb_err *err)
{
    size_t n_code = 0;
    const mb_backend_code *const *code = fn(&n_code);
    const mb_backend_desc *desc[m->n_ops ? m->n_ops : 1];
    const mb_backend_code *matched[m->n_ops ? m->n_ops : 1];
    for (size_t i = 0; i < m->n_ops; i++)
        desc[i] = &m->descriptions[i];
    int rc = mb_backends_match(desc, m->n_ops, code, n_code, matched, err);
    for (size_t i = 0; rc == MB_OK && i < m->n_ops; i++)
        m->ops[i] = mb_backend_compose(desc[i], matched[i]);
    return rc;
}

int mb_module_abi_check(const int *found, const char *symbol, const char *path, char *why, size_t len)
{
    if (found == NULL) {
        snprintf(why, len, "%.500s exports no %.100s: built before this mlbench versioned its backend "
                 "contract; rebuild the modules with this mlbench", path, symbol);
        return MB_EUSAGE;
    }
    if (*found != MB_COMPONENT_ABI) {
        snprintf(why, len, "%.500s was built for backend contract %d, this mlbench has %d: rebuild the modules with "
                 "this mlbench", path, *found, MB_COMPONENT_ABI);
        return MB_EUSAGE;
    }
    return MB_OK;
}

static void open_module(module *m)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    module_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s%s%s", dir, dir[0] ? "/" : "", m->file);
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (m->handle == NULL) {
        const char *e = dlerror();
        snprintf(m->why, sizeof m->why, "cannot load %s: %s", m->file, e ? e : "unknown error");
        return;
    }
    mb_module_code_fn fn = (mb_module_code_fn)dlsym(m->handle, m->symbol);
    mb_err err = { 0 };
    if (mb_module_abi_check(dlsym(m->handle, m->abi), m->abi, path, m->why, sizeof m->why) != MB_OK)
        ; /* a stale module: its tables cannot be trusted, the reason is said */
    else if (fn == NULL)
        snprintf(m->why, sizeof m->why, "%.500s has no %s (mismatched build?)", path, m->symbol);
    else if (compose_loaded(m, fn, &err) != MB_OK)
        snprintf(m->why, sizeof m->why, "%.300s does not match its description in libmlbench: %.300s "
                 "(mismatched build?)", path, err.msg);
    else
        return;
    dlclose(m->handle);
    m->handle = NULL;
}

static void load(module *m, int index)
{
    if (m->tried)
        return;
    m->tried = true;
    m->n_ops = mb_backend_desc_count(m->descriptions);
    m->ops = calloc(m->n_ops ? m->n_ops : 1, sizeof *m->ops);
    if (m->ops == NULL) {
        fprintf(stderr, "mlbench: internal error: out of memory loading %s\n", m->file);
        abort();
    }
    if (!m->built)
        snprintf(m->why, sizeof m->why, "not built in: %s", m->not_built_why);
    else
        open_module(m);
    if (m->handle == NULL)
        make_placeholders(m, index);
}

size_t mb_modules_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < N_MODULES; i++)
        n += mb_backend_desc_count(modules[i].descriptions);
    return n;
}

size_t mb_modules_collect(const mb_component_ops **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < N_MODULES; i++) {
        module *m = &modules[i];
        load(m, (int)i);
        for (size_t j = 0; j < m->n_ops && n < cap; j++)
            out[n++] = &m->ops[j];
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
