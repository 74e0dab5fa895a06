/* module_cuda.c: what libmlbench_cuda.so exports to harness/modules.c: the
 * code of its backends. Their descriptions are in the core
 * (kernels/shared/gpu_descriptions.c); the loader refuses a module whose list
 * and those descriptions disagree. */
#include <stddef.h>

#include "component.h"

MB_MODULE_ABI(cuda); /* the contract it was built for: harness/modules.c refuses another */

extern const mb_backend_code mb_copy_cuda, mb_membw_cuda, mb_peak_cuda, mb_launch_cuda;
extern const mb_backend_code mb_gemm_cublaslt, mb_gemm_cublas;

static const mb_backend_code *const ops[] = {
    &mb_copy_cuda, &mb_membw_cuda, &mb_peak_cuda, &mb_launch_cuda, &mb_gemm_cublaslt, &mb_gemm_cublas,
};

const mb_backend_code *const *mb_module_cuda_code(size_t *n);
const mb_backend_code *const *mb_module_cuda_code(size_t *n)
{
    *n = sizeof ops / sizeof ops[0];
    return ops;
}
