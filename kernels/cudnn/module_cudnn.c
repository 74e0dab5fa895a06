/* module_cudnn.c: what libmlbench_cudnn.so exports to harness/modules.c: the
 * code of its backends (descriptions: kernels/shared/gpu_descriptions.c). */
#include <stddef.h>

#include "component.h"

MB_MODULE_ABI(cudnn); /* the contract it was built for: harness/modules.c refuses another */

extern const mb_backend_code mb_conv_cudnn;

static const mb_backend_code *const ops[] = { &mb_conv_cudnn };

const mb_backend_code *const *mb_module_cudnn_code(size_t *n);
const mb_backend_code *const *mb_module_cudnn_code(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}
