/* gpu_descriptions.c: the description of every backend of the GPU modules
 * (component.h, "description and code"): names, units, flags and parameters.
 *
 * Why here, in the core library, and not in the modules: a module that
 * cannot load (no CUDA runtime, no cuDNN, a mismatched build) must still list
 * its backends with their real parameters, and `mlbench gap`/`list` must not
 * map 200+ MB of GPU libraries to learn a unit. The modules export only code
 * (module_*.c); harness/modules.c joins the two and refuses a module whose
 * code and these lists disagree. One list per module, in its `mlbench list`
 * order. The parameters are plain data: the bounds they share with the code
 * come from headers in kernels/shared. */

#include "component.h"
#include "coll_common.h"
#include "gemm_common.h"

extern const mb_backend_desc mb_cuda_backends[];
extern const mb_backend_desc mb_cudnn_backends[];
extern const mb_backend_desc mb_nccl_backends[];

static const mb_param_spec copy_cuda_params[] = {
    { "direction", MB_P_ENUM, "h2d", "h2d|d2h|bidir|d2d", 1, 0,
      "h2d, d2h, bidir (h2d and d2h at once, one stream each) or d2d" },
    { "memory", MB_P_ENUM, "pinned", "pageable|pinned|wc", 1, 0,
      "host memory: pageable (malloc), pinned (cudaHostAlloc) or wc (write-combined pinned, "
      "h2d only); d2d runs with pinned only (it uses no host memory)" },
    { "size", MB_P_SIZE, "64m", NULL, 1, 68719476736.0, "bytes per copy (4k .. 1g in the suite)" },
    { "copies", MB_P_INT, "0", NULL, 0, 256,
      "copies per timed region; 0 = auto: 256 MiB worth, at least 4, at most 100 (all are queued behind the "
      "spin kernel at once: the driver's queue must hold them)" },
    { "numa", MB_P_BOOL, "true", NULL, 1, 0,
      "bind the timing thread and host buffers to the GPU's NUMA node (sysfs numa_node, hwloc)" },
    MB_PARAM_END,
};

static const mb_param_spec membw_cuda_params[] = {
    { "op", MB_P_ENUM, "triad", "read|write|copy|triad", 1, 0,
      "read (sum, checked), write, copy (c = a) or triad (a = b + s*c)" },
    { "dtype", MB_P_ENUM, "fp32", "fp32|fp64", 1, 0, "element type (16-byte vector accesses either way)" },
    { "size", MB_P_SIZE, "0", NULL, 0, 1099511627776.0,
      "bytes per array; 0 = auto: max(4 x L2, 256 MiB), within a quarter of free device memory" },
    { "threads", MB_P_INT, "256", NULL, 32, 1024, "threads per block (a multiple of 32)" },
    { "blocks_per_sm", MB_P_INT, "0", NULL, 0, 64, "resident blocks per SM; 0 = the occupancy API's maximum" },
    { "waves", MB_P_INT, "1", NULL, 0, 1024,
      "grid size in full waves (SMs x resident blocks per SM), grid-stride loops; 0 = a grid covering the array, "
      "one unrolled step per thread (many short blocks, as PyTorch's elementwise kernels)" },
    MB_PARAM_END,
};

static const mb_param_spec peak_cuda_params[] = {
    { "dtype", MB_P_ENUM, "fp32", "fp32|fp64|fp16", 1, 0, "fp32 (FFMA), fp64 (DFMA) or fp16 (HFMA2 on half2)" },
    { "iters", MB_P_INT, "0", NULL, 0, 1073741824.0,
      "FMA steps per chain (a multiple of 32); 0 = auto: 4096, 1984 for fp16 (the largest exact count)" },
    { "threads", MB_P_INT, "256", NULL, 32, 1024, "threads per block (a multiple of 32)" },
    { "waves", MB_P_INT, "8", NULL, 1, 1024, "full waves of blocks per launch (SMs x resident blocks each)" },
    MB_PARAM_END,
};

static const mb_param_spec launch_cuda_params[] = {
    { "op", MB_P_ENUM, "launch", "launch|launch_sync|graph|stream_sync|d2h_4b", 1, 0,
      "launch (back-to-back rate), launch_sync (launch + sync latency), graph (kernels in a CUDA Graph), "
      "stream_sync (idle stream round trip), d2h_4b (4-byte copy + sync)" },
    { "count", MB_P_INT, "1000", NULL, 1, 100000, "ops per timed run (graph: kernels in the graph)" },
    MB_PARAM_END,
};

static const mb_param_spec gemm_cublaslt_params[] = {
    MB_GEMM_COMMON_PARAMS,
    { "algos", MB_P_INT, "8", NULL, 1, MB_GEMM_LT_MAX_ALGOS,
      "heuristic candidates timed in setup; the fastest is the ceiling" },
    { "out", MB_P_ENUM, "bf16", "bf16|fp16", 0, 0, "fp8 only: output (and C) type" },
    { "fast_accum", MB_P_BOOL, "false", NULL, 0, 0,
      "fp8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM (no periodic promotion of partial sums)" },
    MB_PARAM_END
};

static const mb_param_spec gemm_cublas_params[] = {
    MB_GEMM_COMMON_PARAMS,
    MB_PARAM_END,
};

static const mb_param_spec conv_cudnn_params[] = {
    { "n", MB_P_INT, "32", NULL, 1, 1048576, "batch (images)" },
    { "c", MB_P_INT, "64", NULL, 1, 1048576, "input channels" },
    { "h", MB_P_INT, "56", NULL, 1, 1048576, "input height" },
    { "w", MB_P_INT, "56", NULL, 1, 1048576, "input width" },
    { "k", MB_P_INT, "64", NULL, 1, 1048576, "output channels (filters)" },
    { "r", MB_P_INT, "3", NULL, 1, 1024, "filter height" },
    { "s", MB_P_INT, "3", NULL, 1, 1024, "filter width" },
    { "pad_h", MB_P_INT, "1", NULL, 0, 1024, "zero padding, top and bottom" },
    { "pad_w", MB_P_INT, "1", NULL, 0, 1024, "zero padding, left and right" },
    { "stride_h", MB_P_INT, "1", NULL, 1, 1024, "vertical stride" },
    { "stride_w", MB_P_INT, "1", NULL, 1, 1024, "horizontal stride" },
    { "dilation", MB_P_INT, "1", NULL, 1, 1024, "filter dilation (both axes)" },
    { "direction", MB_P_ENUM, "fwd", "fwd|bwd_data|bwd_filter", 0, 0,
      "forward, gradient of the input, gradient of the filter" },
    { "layout", MB_P_ENUM, "nhwc", "nchw|nhwc", 0, 0, "tensor layout (nhwc: channels last)" },
    { "dtype", MB_P_ENUM, "bf16", "fp32|tf32|fp16|bf16", 0, 0,
      "fp32: strict (CUDNN_FMA_MATH); tf32: TF32 allowed; fp16/bf16: fp32 accumulate" },
    { "workspace", MB_P_SIZE, "512m", NULL, 0, 68719476736.0,
      "most workspace an algorithm may use (cudnnFind*AlgorithmEx skips the others)" },
    { "inner", MB_P_INT, "0", NULL, 0, 100000,
      "convolutions per timed iteration (0: enough for about 2 ms)" },
    { "rotate", MB_P_INT, "0", NULL, 0, MB_GEMM_MAX_ROTATE,
      "buffer sets of x, w and y cycled through (0: enough to move 3x the L2 cache)" },
    { "seed", MB_P_INT, "1", NULL, 0, 9007199254740992.0, "seed of the random inputs" },
    { "samples", MB_P_INT, "64", NULL, 1, 1000000,
      "output elements checked against the CPU reference (all when the output is smaller)" },
    MB_PARAM_END
};

const mb_backend_desc mb_cuda_backends[] = {
    { MB_DESCRIBE("copy", "cuda", "byte", "GB/s", 1e9, copy_cuda_params,
                  "cudaMemcpyAsync h2d/d2h/bidir/d2d, pageable/pinned/wc, spin-kernel gated (nvbandwidth method)"),
      .uses_gpu = true },
    { MB_DESCRIBE("membw", "cuda", "byte", "GB/s", 1e9, membw_cuda_params,
                  "device memory bandwidth: BabelStream read/write/copy/triad, 16-byte accesses, waves of blocks"),
      .uses_gpu = true },
    { MB_DESCRIBE("peak", "cuda", "flop", "TFLOP/s", 1e12, peak_cuda_params,
                  "CUDA-core FMA peak (fp32 FFMA, fp64 DFMA, fp16 HFMA2): independent chains, exact closed-form check"),
      .uses_gpu = true, .compute = true },
    { MB_DESCRIBE("launch", "cuda", "op", "Mop/s", 1e6, launch_cuda_params,
                  "kernel launch rate and latency, CUDA Graph replay, stream sync and 4-byte d2h round trips"),
      .latency_first = true, .uses_gpu = true },
    { MB_DESCRIBE("gemm", "cublaslt", "flop", "TFLOP/s", 1e12, gemm_cublaslt_params,
                  "GPU GEMM ceiling: cublasLtMatmul, best of the heuristic's top algorithms"),
      .uses_gpu = true, .compute = true },
    { MB_DESCRIBE("gemm", "cublas", "flop", "TFLOP/s", 1e12, gemm_cublas_params,
                  "GPU GEMM as frameworks call it: cublasGemmEx / StridedBatchedEx, default algorithm"),
      .uses_gpu = true, .compute = true },
    MB_BACKEND_DESC_END,
};

const mb_backend_desc mb_cudnn_backends[] = {
    { MB_DESCRIBE("conv", "cudnn", "flop", "TFLOP/s", 1e12, conv_cudnn_params,
                  "GPU convolution ceiling: cuDNN, fastest algorithm of cudnnFind*AlgorithmEx"),
      .uses_gpu = true, .compute = true },
    MB_BACKEND_DESC_END,
};

static const mb_param_spec coll_nccl_params[] = {
    { "size", MB_P_SIZE, "1m", NULL, 1, 1099511627776.0,
      "bytes: the buffer (all-reduce, broadcast), the gathered output (all-gather), the input (reduce-scatter)" },
    { "dtype", MB_P_ENUM, "float", MB_COLL_DTYPE_CHOICES, 0, -1, "element type" },
    { "inplace", MB_P_BOOL, "0", NULL, 0, -1, "in place (send buffer = receive buffer) instead of separate buffers" },
    { "batch", MB_P_INT, "1", NULL, 1, 100000, "collectives back to back per timed iteration" },
    { "warmup", MB_P_INT, "5", NULL, 0, 100000, "untimed collectives in setup, same count on every rank" },
    { "topology", MB_P_ENUM, "auto", "auto|local|mpi", 0, -1,
      "local: one process drives every GPU; mpi: one rank per GPU (mpirun/srun); auto: mpi with 2+ ranks" },
    { "gpus", MB_P_INT, "0", NULL, 0, 1024,
      "topology=local: GPUs to use (0 = every visible GPU; 1 = a one-GPU smoke test of the NCCL path)" },
    MB_PARAM_END,
};

/* The four collectives differ only in name and summary. */
#define COLL_NCCL(comp, summary_text)                                                 \
    { MB_DESCRIBE(comp, "nccl", "byte", "GB/s", 1e9, coll_nccl_params, summary_text), \
      .collective = true, .uses_gpu = true }

const mb_backend_desc mb_nccl_backends[] = {
    COLL_NCCL("allreduce", "ncclAllReduce (sum) across GPUs: bus bandwidth, GB/s"),
    COLL_NCCL("allgather", "ncclAllGather across GPUs: bus bandwidth, GB/s"),
    COLL_NCCL("reducescatter", "ncclReduceScatter (sum) across GPUs: bus bandwidth, GB/s"),
    COLL_NCCL("broadcast", "ncclBroadcast from rank 0 across GPUs: bus bandwidth, GB/s"),
    MB_BACKEND_DESC_END,
};
