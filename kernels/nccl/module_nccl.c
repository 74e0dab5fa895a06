/* module_nccl.c: what libmlbench_nccl.so exports to harness/modules.c: the
 * code of its backends (descriptions: kernels/shared/gpu_descriptions.c). */
#include <stddef.h>

#include "component.h"

MB_MODULE_ABI(nccl); /* the contract it was built for: harness/modules.c refuses another */

extern const mb_backend_code mb_allreduce_nccl, mb_allgather_nccl, mb_reducescatter_nccl,
    mb_broadcast_nccl;

static const mb_backend_code *const ops[] = {
    &mb_allreduce_nccl, &mb_allgather_nccl, &mb_reducescatter_nccl, &mb_broadcast_nccl,
};

const mb_backend_code *const *mb_module_nccl_code(size_t *n);
const mb_backend_code *const *mb_module_nccl_code(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}
