/* gpu_arch.h: the per-compute-capability throughput table, configs/gpu-arch.ini
 * (FLOPs per clock per SM of the GEMM math and of the CUDA cores' FFMA, DFMA,
 * HFMA2; an FMA is 2 FLOPs). One table for gemm/conv ("peak_from_attributes")
 * and the `peak` component. Host code, no CUDA. */
#ifndef MB_GPU_ARCH_H
#define MB_GPU_ARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "mb.h"

typedef struct mb_gpu_arch_row {
    char section[16];  /* "sm_90" */
    char name[64];     /* "Hopper (GH100)" */
    char source[200];  /* where the numbers come from */
    bool geforce;      /* geforce_<key> was used */
    char desc[160];    /* "sm_90 Hopper (GH100) bf16 4096 FLOP/clk/SM" */
} mb_gpu_arch_row;

/* FLOPs (int8: integer ops) per clock per SM of the math behind `key` for
 * compute capability major.minor, from section sm_<major><minor> of `path`
 * (NULL: <config dir>/gpu-arch.ini). Keys: "fp64", "fp32", "tf32", "fp16",
 * "bf16", "fp8", "int8" (GEMM math), "cores_fp16", "cores_fp64" (CUDA
 * cores; their fp32 is "fp32"); geforce_<key> replaces <key> when
 * device_name (may be NULL) contains "GeForce". row (may be NULL) gets the
 * section's name and source.
 * MB_ESKIP when the file, the section or the key is missing; MB_EUSAGE with
 * FILE:LINE when a value in the section is not a positive number or a key is
 * unknown. */
int mb_gpu_arch_rate(const char *path, int major, int minor, const char *device_name,
                     const char *key, double *per_clk_sm, mb_gpu_arch_row *row, mb_err *err);

#endif
