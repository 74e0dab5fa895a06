/* registry.c: the explicit list of component backends.
 *
 * Adding a backend = its code in a new file in kernels/, its description in
 * the folder's descriptions.c, and one extern and one array line here (a GPU
 * backend: a line in its module_*.c instead). Explicit on purpose:
 * constructor-attribute self-registration silently drops entries when
 * objects come from a static library. Backends whose library was not found
 * at build time still have code (MB_NOT_BUILT_IN) so `mlbench list` says why
 * they cannot run.
 *
 * The tables the harness uses are composed here from description and code
 * (harness/backends.c), sized from the description lists, so no backend can
 * be left out. The GPU backends live in shared modules loaded on first use
 * (harness/modules.c); their tables join this list when the registry is
 * first consulted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "component.h"
#include "modules.h"

/* host side */
extern const mb_backend_code mb_disk_pread, mb_disk_io_uring, mb_disk_mmap;
extern const mb_backend_code mb_hostmem_stream, mb_hostmem_memcpy;
/* CPU counterparts */
extern const mb_backend_code mb_gemm_openblas, mb_gemm_onednn, mb_conv_onednn;
/* collectives */
extern const mb_backend_code mb_allreduce_mpi, mb_allgather_mpi, mb_reducescatter_mpi, mb_broadcast_mpi;

static const mb_backend_code *const builtin_code[] = {
    /* host side */
    &mb_disk_pread,
    &mb_disk_io_uring,
    &mb_disk_mmap,
    &mb_hostmem_stream,
    &mb_hostmem_memcpy,
    /* CPU counterparts */
    &mb_gemm_openblas,
    &mb_gemm_onednn,
    &mb_conv_onednn,
    /* collectives */
    &mb_allreduce_mpi,
    &mb_allgather_mpi,
    &mb_reducescatter_mpi,
    &mb_broadcast_mpi,
};
#define N_BUILTIN_CODE (sizeof builtin_code / sizeof builtin_code[0])

/* The built-in descriptions, in `mlbench list` order. */
static const mb_backend_desc *const builtin_lists[] = { mb_disk_backends, mb_cpu_backends, mb_coll_backends };
#define N_BUILTIN_LISTS (sizeof builtin_lists / sizeof builtin_lists[0])

static mb_component_ops *builtin; /* composed, one per built-in description */
static size_t n_builtin;
static const mb_component_ops **all; /* built-in, then the modules' */
static size_t n_all;

/* A registry that cannot be built is a broken build, not a user error: say
 * what is wrong and stop rather than run with backends missing. */
static void registry_fail(const char *what)
{
    fprintf(stderr, "mlbench: internal error: backend registry: %s\n", what);
    abort();
}

/* Every built-in description in order (out NULL: only counts them). */
static size_t builtin_descriptions(const mb_backend_desc **out)
{
    size_t n = 0;
    for (size_t l = 0; l < N_BUILTIN_LISTS; l++)
        for (const mb_backend_desc *d = builtin_lists[l]; d->component; d++, n++)
            if (out)
                out[n] = d;
    return n;
}

static void fill_builtin(void)
{
    if (builtin)
        return;
    size_t n = builtin_descriptions(NULL);
    const mb_backend_desc **desc = malloc(n * sizeof *desc);
    const mb_backend_code **code = malloc(n * sizeof *code);
    builtin = calloc(n, sizeof *builtin);
    if (desc == NULL || code == NULL || builtin == NULL)
        registry_fail("out of memory");
    builtin_descriptions(desc);
    mb_err err = { 0 };
    if (mb_backends_match(desc, n, builtin_code, N_BUILTIN_CODE, code, &err) != MB_OK)
        registry_fail(err.msg);
    for (size_t i = 0; i < n; i++)
        builtin[i] = mb_backend_compose(desc[i], code[i]);
    n_builtin = n;
    free(desc);
    free(code);
}

static void fill(void)
{
    if (all)
        return;
    fill_builtin();
    size_t cap = n_builtin + mb_modules_count();
    all = malloc(cap * sizeof *all);
    if (all == NULL)
        registry_fail("out of memory");
    for (size_t i = 0; i < n_builtin; i++)
        all[i] = &builtin[i];
    n_all = n_builtin + mb_modules_collect(all + n_builtin, cap - n_builtin);
}

size_t mb_registry_count(void)
{
    fill();
    return n_all;
}

const mb_component_ops *mb_registry_at(size_t i)
{
    fill();
    return i < n_all ? all[i] : NULL;
}

const mb_component_ops *mb_registry_find(const char *component, const char *backend)
{
    fill();
    for (size_t i = 0; i < n_all; i++) {
        const mb_component_ops *ops = all[i];
        if (strcmp(ops->component, component) == 0 &&
            (backend == NULL || strcmp(ops->backend, backend) == 0))
            return ops;
    }
    return NULL;
}

const mb_component_ops *mb_registry_find_builtin(const char *component, const char *backend)
{
    fill_builtin();
    for (size_t i = 0; i < n_builtin; i++)
        if (strcmp(builtin[i].component, component) == 0 && strcmp(builtin[i].backend, backend) == 0)
            return &builtin[i];
    return NULL;
}
