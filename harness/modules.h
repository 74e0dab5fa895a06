/* modules.h: the GPU backends' shared modules (libmlbench_cuda.so,
 * libmlbench_cudnn.so, libmlbench_nccl.so), loaded with dlopen the first
 * time the registry is asked for its backends. See harness/modules.c. */
#ifndef MB_MODULES_H
#define MB_MODULES_H

#include <stddef.h>

#include "component.h"

/* How many backends the modules describe (loads nothing): the registry's
 * size for them. */
size_t mb_modules_count(void);

/* Appends every module's tables, composed from the backends' descriptions
 * and the module's code (or, for a module that cannot be loaded or whose
 * code does not match the descriptions, placeholder tables whose probe gives
 * the reason) to out. Returns how many were written (at most cap). */
size_t mb_modules_collect(const mb_component_ops **out, size_t cap);

/* A module's ABI global `symbol` (mb_module_cuda_abi; found NULL when it exports
 * none) against this build's MB_COMPONENT_ABI: MB_OK, or MB_EUSAGE with the
 * reason in why (the path named). */
int mb_module_abi_check(const int *found, const char *symbol, const char *path, char *why, size_t len);

/* dlsym in the CUDA module (NULL when it is not loaded); loads the modules
 * first. *why (may be NULL) gets the reason when NULL is returned. */
void *mb_modules_cuda_symbol(const char *name, const char **why);

#endif
