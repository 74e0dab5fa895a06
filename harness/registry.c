/* registry.c: the explicit list of component backends.
 *
 * Adding a backend = one new file in kernels/ + one extern and one array line
 * here. Explicit on purpose: constructor-attribute self-registration silently
 * drops entries when objects come from a static library. Backends whose
 * library was not found at build time still have a table (MB_NOT_BUILT_IN)
 * so `mlbench list` says why they cannot run. */
#include <string.h>

#include "component.h"

/* host side */
extern const mb_component_ops mb_disk_pread, mb_disk_uring, mb_disk_mmap;
extern const mb_component_ops mb_hostmem_stream_ops, mb_hostmem_memcpy_ops;
/* CPU counterparts */
extern const mb_component_ops mb_gemm_openblas_ops, mb_conv_onednn_ops;
/* GPU */
extern const mb_component_ops mb_copy_cuda, mb_membw_cuda, mb_peak_cuda, mb_launch_cuda;
extern const mb_component_ops mb_gemm_cublaslt, mb_gemm_cublas, mb_conv_cudnn;
/* collectives */
extern const mb_component_ops mb_allreduce_nccl, mb_allgather_nccl, mb_reducescatter_nccl,
    mb_broadcast_nccl, mb_allreduce_mpi, mb_allgather_mpi, mb_reducescatter_mpi, mb_broadcast_mpi;

const mb_component_ops *const mb_registry[] = {
    /* host side */
    &mb_disk_pread,
    &mb_disk_uring,
    &mb_disk_mmap,
    &mb_hostmem_stream_ops,
    &mb_hostmem_memcpy_ops,
    /* CPU counterparts */
    &mb_gemm_openblas_ops,
    &mb_conv_onednn_ops,
    /* GPU */
    &mb_copy_cuda,
    &mb_membw_cuda,
    &mb_peak_cuda,
    &mb_launch_cuda,
    &mb_gemm_cublaslt,
    &mb_gemm_cublas,
    &mb_conv_cudnn,
    /* collectives */
    &mb_allreduce_nccl,
    &mb_allreduce_mpi,
    &mb_allgather_nccl,
    &mb_allgather_mpi,
    &mb_reducescatter_nccl,
    &mb_reducescatter_mpi,
    &mb_broadcast_nccl,
    &mb_broadcast_mpi,
    NULL, /* keeps the array non-empty; not counted */
};

const size_t mb_registry_len = sizeof mb_registry / sizeof mb_registry[0] - 1;

const mb_component_ops *mb_registry_find(const char *component, const char *backend)
{
    for (size_t i = 0; i < mb_registry_len; i++) {
        const mb_component_ops *ops = mb_registry[i];
        if (strcmp(ops->component, component) == 0 &&
            (backend == NULL || strcmp(ops->backend, backend) == 0))
            return ops;
    }
    return NULL;
}
