/* registry.c: the explicit list of component backends.
 *
 * Adding a backend = one new file in kernels/ + one extern and one array line
 * here. Explicit on purpose: constructor-attribute self-registration silently
 * drops entries when objects come from a static library. Backends whose
 * library was not found at build time still have a table (MB_NOT_BUILT_IN)
 * so `mlbench list` says why they cannot run.
 *
 * The GPU backends live in shared modules loaded on first use
 * (harness/modules.c); their tables join this list when the registry is
 * first consulted. */
#include <string.h>

#include "component.h"
#include "modules.h"

/* host side */
extern const mb_component_ops mb_disk_pread, mb_disk_uring, mb_disk_mmap;
extern const mb_component_ops mb_hostmem_stream_ops, mb_hostmem_memcpy_ops;
/* CPU counterparts */
extern const mb_component_ops mb_gemm_openblas_ops, mb_gemm_onednn_ops, mb_conv_onednn_ops;
/* collectives */
extern const mb_component_ops mb_allreduce_mpi, mb_allgather_mpi, mb_reducescatter_mpi, mb_broadcast_mpi;

static const mb_component_ops *const builtin[] = {
    /* host side */
    &mb_disk_pread,
    &mb_disk_uring,
    &mb_disk_mmap,
    &mb_hostmem_stream_ops,
    &mb_hostmem_memcpy_ops,
    /* CPU counterparts */
    &mb_gemm_openblas_ops,
    &mb_gemm_onednn_ops,
    &mb_conv_onednn_ops,
    /* collectives */
    &mb_allreduce_mpi,
    &mb_allgather_mpi,
    &mb_reducescatter_mpi,
    &mb_broadcast_mpi,
};

#define MAX_BACKENDS 64

static const mb_component_ops *all[MAX_BACKENDS];
static size_t n_all;

static void fill(void)
{
    if (n_all)
        return;
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        all[n_all++] = builtin[i];
    n_all += mb_modules_collect(all + n_all, MAX_BACKENDS - n_all);
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
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (strcmp(builtin[i]->component, component) == 0 && strcmp(builtin[i]->backend, backend) == 0)
            return builtin[i];
    return NULL;
}
