/* gpu_arch.h: the per-compute-capability table of configs/gpu-cuda-cores.ini
 * (FLOPs per clock per SM on the CUDA cores: FFMA, DFMA, HFMA2; an FMA is
 * 2 FLOPs). Host code, no CUDA. */
#ifndef MB_GPU_ARCH_H
#define MB_GPU_ARCH_H

#include <stddef.h>

#include "mb.h"

typedef struct mb_gpu_arch {
    char name[64];     /* "Hopper" */
    char source[256];  /* where the numbers come from */
    double fp16, fp32, fp64; /* FLOPs per clock per SM; 0 = not known */
} mb_gpu_arch;

/* Reads section sm_<major><minor> of `path` (NULL: <config dir>/gpu-cuda-cores.ini).
 * MB_ESKIP when the file or the section is missing, MB_EUSAGE with file:line
 * when a value is not a positive number or a key is unknown. */
int mb_gpu_arch_load(const char *path, int major, int minor, mb_gpu_arch *out, mb_err *err);
/* The value for "fp16" | "fp32" | "fp64" (0 when unknown or another name). */
double mb_gpu_arch_flops(const mb_gpu_arch *a, const char *dtype);

#endif
