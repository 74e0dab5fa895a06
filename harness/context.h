/* context.h: the machine context stored with every results file. */
#ifndef MB_CONTEXT_H
#define MB_CONTEXT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Host name, CPU model, cores/threads, sockets, NUMA nodes, caches, RAM, OS,
 * kernel, compiler, mlbench version and git revision, UTC time, and for the
 * disk the device and file system under disk_dir (may be NULL), then the GPU
 * context (gpu_hooks.h). Never fails: unknown fields are null. */
cJSON *mb_context_collect(const char *disk_dir);

/* The environment variables that change a library's code path or thread
 * count (OPENBLAS_*, OMP_*, MKL_*, DNNL_*, ONEDNN_*, CUBLAS_*, NCCL_*, CUDA_*,
 * and NVIDIA_TF32_OVERRIDE), name -> value, sorted by name: results must say
 * when e.g. OPENBLAS_CORETYPE=Haswell forced AVX2 kernels. `envp` is an
 * environ-style array (NULL: the process's own). Stored as
 * context.environment. */
cJSON *mb_context_environment(char *const *envp);
/* True when a variable of this name is recorded there. */
bool mb_context_env_recorded(const char *name);

/* Size in bytes of the last-level cache (0 when unknown). */
long long mb_llc_bytes(void);
/* Online logical CPUs. */
int mb_online_cpus(void);
/* Physical memory in bytes (0 when unknown) and what is available now. */
long long mb_ram_bytes(void);
long long mb_ram_available_bytes(void);
/* Short host name (no domain). */
const char *mb_hostname(void);

#endif
