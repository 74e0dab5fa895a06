/* descriptions.c: the description of every host memory and CPU backend
 * (component.h, "description and code"): names, units, flags and parameters.
 * One file per kernel folder, so a folder's parameters read together and a
 * backend built without its library (OpenBLAS, oneDNN: MB_NOT_BUILT_IN) still
 * lists them. The order is `mlbench list`'s. */

#include "component.h"

#define MAX_CPUS 4096 /* bound of hostmem/stream's threads parameter */

extern const mb_backend_desc mb_cpu_backends[];

static const mb_param_spec hostmem_stream_params[] = {
    { "kernel", MB_P_ENUM, "triad", "copy|scale|add|triad", 0, 0,
      "STREAM kernel: copy c=a, scale b=3c, add c=a+b, triad a=b+3c" },
    { "threads", MB_P_INT, "0", NULL, 0, MAX_CPUS,
      "worker threads, one pinned per CPU; 0 = every CPU this process may use" },
    { "array_size", MB_P_SIZE, "0", NULL, 0, 1e15,
      "bytes per array; 0 = 4x the total last-level cache (at least 64 MiB)" },
    MB_PARAM_END,
};

static const mb_param_spec hostmem_memcpy_params[] = {
    { "size", MB_P_SIZE, "0", NULL, 0, 1e15,
      "bytes copied per iteration; 0 = 4x the total last-level cache (at least 64 MiB)" },
    MB_PARAM_END,
};

/* The shape both CPU GEMMs take. */
#define CPU_GEMM_SHAPE_PARAMS                                                                      \
    { "m", MB_P_INT, "1024", NULL, 1, 1 << 20, "rows of A and C" },                                \
        { "n", MB_P_INT, "1024", NULL, 1, 1 << 20, "columns of B and C" },                         \
        { "k", MB_P_INT, "1024", NULL, 1, 1 << 20, "columns of A, rows of B" },                    \
        { "trans", MB_P_ENUM, "nn", "nn|nt|tn|tt", 0, 0,                                           \
          "A and B transposed (t) or not (n), as stored row-major" }

static const mb_param_spec gemm_openblas_params[] = {
    { "dtype", MB_P_ENUM, "fp32", "fp32|fp64", 0, 0, "fp32 = cblas_sgemm, fp64 = cblas_dgemm" },
    CPU_GEMM_SHAPE_PARAMS,
    { "threads", MB_P_INT, "0", NULL, 0, 4096,
      "OpenBLAS threads; 0 = OpenBLAS's default (OPENBLAS_NUM_THREADS or every core)" },
    MB_PARAM_END,
};

static const mb_param_spec gemm_onednn_params[] = {
    { "dtype", MB_P_ENUM, "fp32", "fp32|bf16", 0, 0,
      "fp32, or bf16 (A, B, C; f32 accumulation) where the CPU has native bf16" },
    CPU_GEMM_SHAPE_PARAMS,
    { "threads", MB_P_INT, "0", NULL, 0, 4096,
      "OpenMP threads for oneDNN; 0 = its default (OMP_NUM_THREADS or every CPU)" },
    MB_PARAM_END,
};

static const mb_param_spec conv_onednn_params[] = {
    { "dtype", MB_P_ENUM, "fp32", "fp32|bf16", 0, 0,
      "fp32, or bf16 (src, weights, dst; f32 accumulation) where the CPU has native bf16" },
    { "n", MB_P_INT, "1", NULL, 1, 1 << 16, "batch" },
    { "c", MB_P_INT, "64", NULL, 1, 1 << 16, "input channels" },
    { "h", MB_P_INT, "56", NULL, 1, 1 << 16, "input height" },
    { "w", MB_P_INT, "56", NULL, 1, 1 << 16, "input width" },
    { "k", MB_P_INT, "64", NULL, 1, 1 << 16, "output channels" },
    { "r", MB_P_INT, "3", NULL, 1, 64, "filter height" },
    { "s", MB_P_INT, "3", NULL, 1, 64, "filter width" },
    { "pad", MB_P_INT, "1", NULL, 0, 64, "zero padding, both sides, both axes" },
    { "stride", MB_P_INT, "1", NULL, 1, 64, "stride, both axes" },
    { "layout", MB_P_ENUM, "nhwc", "nchw|nhwc|any",
      0, 0, "src/dst layout; any = oneDNN's choice (reported)" },
    { "threads", MB_P_INT, "0", NULL, 0, 4096,
      "OpenMP threads for oneDNN; 0 = its default (OMP_NUM_THREADS or every CPU)" },
    { "verify_samples", MB_P_INT, "256", NULL, 0, 1 << 20,
      "output elements checked against a direct convolution in double; 0 = all" },
    MB_PARAM_END,
};

const mb_backend_desc mb_cpu_backends[] = {
    { MB_DESCRIBE("hostmem", "stream", "byte", "GB/s", 1e9, hostmem_stream_params,
                  "STREAM copy/scale/add/triad over arrays >= 4x LLC, pinned threads (GB/s)") },
    { MB_DESCRIBE("hostmem", "memcpy", "byte", "GB/s", 1e9, hostmem_memcpy_params,
                  "single-thread glibc memcpy over buffers >= 4x LLC (GB/s, read+write counted)") },
    { MB_DESCRIBE("gemm", "openblas", "flop", "GFLOP/s", 1e9, gemm_openblas_params,
                  "CPU sgemm/dgemm via OpenBLAS cblas, all cores (GFLOP/s, computed CPU peak)"), .compute = true },
    { MB_DESCRIBE("gemm", "onednn", "flop", "GFLOP/s", 1e9, gemm_onednn_params,
                  "CPU GEMM via oneDNN matmul, fp32 and native bf16, all cores (GFLOP/s, computed CPU peak)"),
      .compute = true },
    { MB_DESCRIBE("conv", "onednn", "flop", "GFLOP/s", 1e9, conv_onednn_params,
                  "CPU forward convolution via oneDNN, fp32 and native bf16 (GFLOP/s, computed peak)"),
      .compute = true },
    MB_BACKEND_DESC_END,
};
