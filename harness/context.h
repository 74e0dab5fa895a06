/* context.h: the machine context stored with every results file. */
#ifndef MB_CONTEXT_H
#define MB_CONTEXT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "host.h" /* the host facts were here; kept visible to the harness */

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


/* context.launcher: who started this process and with what, so that runs
 * under different launchers or settings can be told apart: {name ("mpirun",
 * "srun", "mpiexec (PMI)", "PMIx launcher" or null), command_line (the
 * nearest launcher ancestor's, null where it runs on another machine),
 * world_size, mpi_library (MPI_Get_library_version's first line),
 * pmix_version, and under Slurm slurm: {job_id, step_id, job_name, cluster,
 * partition, node_list, nodes, ntasks, tasks_per_node, cpus_per_task,
 * mpi_type}}; a value not set is null. `envp`: environ-style (NULL: the
 * process's own; then the command line is looked up too). */
cJSON *mb_context_launcher(char *const *envp);
/* The command line of the nearest ancestor of `pid` that is a launcher
 * (mpirun, mpiexec, srun, ...) under a /proc-like directory; false when none. */
bool mb_context_launcher_command_at(const char *proc, long pid, char *out, size_t len);

#endif
