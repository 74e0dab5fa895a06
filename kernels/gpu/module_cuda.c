/* module_cuda.c: what libmlbench_cuda.so exports to harness/modules.c.
 * Keep the list in step with the module's entry table there. */
#include <stddef.h>

#include "component.h"

extern const mb_component_ops mb_copy_cuda, mb_membw_cuda, mb_peak_cuda, mb_launch_cuda;
extern const mb_component_ops mb_gemm_cublaslt, mb_gemm_cublas;

static const mb_component_ops *const ops[] = {
    &mb_copy_cuda, &mb_membw_cuda, &mb_peak_cuda, &mb_launch_cuda, &mb_gemm_cublaslt, &mb_gemm_cublas,
};

const mb_component_ops *const *mb_module_cuda_ops(size_t *n);
const mb_component_ops *const *mb_module_cuda_ops(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}
