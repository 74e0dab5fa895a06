/* module_cudnn.c: what libmlbench_cudnn.so exports to harness/modules.c. */
#include <stddef.h>

#include "component.h"

extern const mb_component_ops mb_conv_cudnn;

static const mb_component_ops *const ops[] = { &mb_conv_cudnn };

const mb_component_ops *const *mb_module_cudnn_ops(size_t *n);
const mb_component_ops *const *mb_module_cudnn_ops(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}
