/* module_nccl.c: what libmlbench_nccl.so exports to harness/modules.c. */
#include <stddef.h>

#include "component.h"

extern const mb_component_ops mb_allreduce_nccl, mb_allgather_nccl, mb_reducescatter_nccl,
    mb_broadcast_nccl;

static const mb_component_ops *const ops[] = {
    &mb_allreduce_nccl, &mb_allgather_nccl, &mb_reducescatter_nccl, &mb_broadcast_nccl,
};

const mb_component_ops *const *mb_module_nccl_ops(size_t *n);
const mb_component_ops *const *mb_module_nccl_ops(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}
