/* context.c: the machine facts stored with every results file, from /proc,
 * /sys and uname. Best effort: an unreadable fact is null, never an error. */
#include "context.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "blockdev.h"
#include "cpu_info.h"
#include "host.h"
#include "gbench_shim.h"
#include "gpu_hooks.h"
#include "mb_git_revision.h"
#include "paths.h"

#ifdef MB_HAVE_MPI
#include <mpi.h>
#endif


/* The CPU facts come from the platform's one /proc/cpuinfo parser
 * (cpu_info.h); physical_cores and sockets as the text lists them. */
static cJSON *cpu_json(void)
{
    cJSON *cpu = cJSON_CreateObject();
    const mb_cpu_info *ci = mb_cpu_info_host();
    cJSON_AddStringToObject(cpu, "model", ci->model[0] ? ci->model : "unknown");
    cJSON_AddStringToObject(cpu, "vendor", ci->vendor[0] ? ci->vendor : "unknown");
    cJSON_AddNumberToObject(cpu, "logical_cpus", mb_online_cpus());
    if (ci->text_cores > 0)
        cJSON_AddNumberToObject(cpu, "physical_cores", ci->text_cores);
    else
        cJSON_AddNullToObject(cpu, "physical_cores");
    cJSON_AddNumberToObject(cpu, "sockets", ci->sockets > 0 ? ci->sockets : 1);
    cJSON_AddNumberToObject(cpu, "numa_nodes", mb_numa_nodes());
    if (ci->mhz_max > 0)
        cJSON_AddNumberToObject(cpu, "mhz_max", ci->mhz_max);
    else
        cJSON_AddNullToObject(cpu, "mhz_max");
    if (ci->mhz_now > 0)
        cJSON_AddNumberToObject(cpu, "mhz_now", ci->mhz_now);
    cJSON *fl = cJSON_AddArrayToObject(cpu, "flags_simd");
    for (int i = 0; mb_cpu_simd_name(i) != NULL; i++)
        if (ci->simd & (1u << i))
            cJSON_AddItemToArray(fl, cJSON_CreateString(mb_cpu_simd_name(i)));
    cJSON *caches = cJSON_AddArrayToObject(cpu, "caches");
    mb_cache_info ci_caches[16];
    for (int i = 0, n = mb_cpu_caches(ci_caches, 16); i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "level", ci_caches[i].level);
        cJSON_AddStringToObject(c, "type", ci_caches[i].type);
        cJSON_AddNumberToObject(c, "size_bytes", (double)ci_caches[i].size_bytes);
        cJSON_AddItemToArray(caches, c);
    }
    return cpu;
}

static cJSON *os_json(void)
{
    cJSON *os = cJSON_CreateObject();
    char pretty[256] = "unknown", line[512];
    FILE *f = fopen("/etc/os-release", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            if (*v == '"') {
                v++;
                v[strcspn(v, "\"")] = '\0';
            }
            snprintf(pretty, sizeof pretty, "%.255s", v);
        }
    }
    if (f)
        fclose(f);
    struct utsname u;
    cJSON_AddStringToObject(os, "name", pretty);
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(os, "kernel", u.release);
        cJSON_AddStringToObject(os, "arch", u.machine);
    }
    return os;
}

static cJSON *build_json(void)
{
    cJSON *b = cJSON_CreateObject();
#ifdef __VERSION__
    char cc[128];
    snprintf(cc, sizeof cc, "%s %s",
#ifdef __clang__
             "clang",
#else
             "gcc",
#endif
             __VERSION__);
    cJSON_AddStringToObject(b, "compiler", cc);
#endif
    cJSON_AddStringToObject(b, "mlbench_version", MB_VERSION);
    cJSON_AddStringToObject(b, "git_revision", MB_GIT_REVISION);
    cJSON_AddStringToObject(b, "build_type", MB_BUILD_TYPE);
#ifdef MB_HAVE_CUDA
    cJSON_AddTrueToObject(b, "cuda_built");
#else
    cJSON_AddFalseToObject(b, "cuda_built");
#endif
    cJSON *libs = cJSON_AddObjectToObject(b, "libraries");
    cJSON_AddStringToObject(libs, "google_benchmark", mb_gb_version());
    char v[32];
    snprintf(v, sizeof v, "%s", cJSON_Version());
    cJSON_AddStringToObject(libs, "cjson", v);
    return b;
}

/* The disk of the run directory, as the platform layer reads it (blockdev.h). */
static cJSON *disk_json(const char *dir)
{
    cJSON *d = cJSON_CreateObject();
    mb_disk_info *di = calloc(1, sizeof *di);
    if (di == NULL)
        return d;
    mb_disk_of_dir(dir, di);
    cJSON_AddStringToObject(d, "dir", di->dir);
    if (!di->resolved) {
        free(di);
        return d;
    }
    cJSON_AddStringToObject(d, "mount_point", di->mount_point);
    cJSON_AddStringToObject(d, "filesystem", di->filesystem);
    cJSON_AddStringToObject(d, "device", di->device);
    if (di->block_device[0]) {
        cJSON_AddStringToObject(d, "block_device", di->block_device);
        if (di->model[0])
            cJSON_AddStringToObject(d, "model", di->model);
        if (di->rotational >= 0)
            cJSON_AddBoolToObject(d, "rotational", di->rotational != 0);
        if (di->scheduler[0])
            cJSON_AddStringToObject(d, "scheduler", di->scheduler);
    }
    if (di->have_space) {
        cJSON_AddNumberToObject(d, "size_bytes", di->size_bytes);
        cJSON_AddNumberToObject(d, "free_bytes", di->free_bytes);
    }
    free(di);
    return d;
}

/* Prefixes of the variables libraries read to pick kernels, ISAs, thread
 * counts, algorithms or transports; exact names for the few without one.
 * The MPI stack's own: Open MPI's MCA parameters (mpirun --mca X passes them
 * as OMPI_MCA_X), UCX, PMIx's MCA, MPICH/Intel MPI, libfabric; and the
 * Slurm variables that decide placement and binding. */
static const char *const env_prefixes[] = { "OPENBLAS_", "GOTO_", "OMP_", "KMP_",    "MKL_",
                                            "DNNL_",     "ONEDNN_", "CUBLAS_", "CUBLASLT_",
                                            "NCCL_",     "CUDA_",   "CUDNN_",  "OMPI_MCA_",
                                            "UCX_",      "PMIX_MCA_", "MPICH_", "I_MPI_",
                                            "FI_",       "SLURM_CPU_BIND", NULL };
static const char *const env_names[] = { "NVIDIA_TF32_OVERRIDE", "SLURM_DISTRIBUTION", "SLURM_MPI_TYPE",
                                         "SLURM_CPUS_PER_TASK", "SLURM_HINT", NULL };
/* The launcher's plumbing under those prefixes: addresses, session
 * directories, job and process ids that differ on every run (two runs with the
 * same settings must give the same environment), and
 * orte_precondition_transports, a per-job secret key. Who launched and where
 * is context.launcher's. */
static const char *const env_plumbing_prefixes[] = { "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_initial_wdir",
                                                     NULL };
static const char *const env_plumbing_names[] = { "OMPI_MCA_pmix", NULL };

bool mb_context_env_recorded(const char *name)
{
    for (int i = 0; env_plumbing_prefixes[i]; i++)
        if (strncmp(name, env_plumbing_prefixes[i], strlen(env_plumbing_prefixes[i])) == 0)
            return false;
    for (int i = 0; env_plumbing_names[i]; i++)
        if (strcmp(name, env_plumbing_names[i]) == 0)
            return false;
    for (int i = 0; env_prefixes[i]; i++)
        if (strncmp(name, env_prefixes[i], strlen(env_prefixes[i])) == 0)
            return true;
    for (int i = 0; env_names[i]; i++)
        if (strcmp(name, env_names[i]) == 0)
            return true;
    return false;
}

static int env_entry_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

cJSON *mb_context_environment(char *const *envp)
{
    extern char **environ;
    cJSON *env = cJSON_CreateObject();
    char *const *all = envp ? envp : environ;
    size_t count = 0;
    while (all && all[count])
        count++;
    const char **picked = count ? malloc(count * sizeof *picked) : NULL;
    size_t n = 0;
    for (size_t i = 0; picked && i < count; i++) {
        const char *eq = strchr(all[i], '=');
        char name[256];
        if (eq == NULL || (size_t)(eq - all[i]) >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(eq - all[i]), all[i]);
        if (mb_context_env_recorded(name))
            picked[n++] = all[i];
    }
    if (n > 1) /* the same file for the same environment, whatever environ's order */
        qsort(picked, n, sizeof *picked, env_entry_cmp);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(picked[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - picked[i]), picked[i]);
        cJSON_AddStringToObject(env, name, eq + 1);
    }
    free(picked);
    return env;
}

cJSON *mb_context_collect(const char *disk_dir)
{
    cJSON *ctx = cJSON_CreateObject();
    cJSON *host = cJSON_AddObjectToObject(ctx, "host");
    cJSON_AddStringToObject(host, "name", mb_hostname());
    char now[32];
    mb_utc_now(now, sizeof now);
    cJSON_AddStringToObject(host, "utc_time", now);
    cJSON_AddItemToObject(ctx, "cpu", cpu_json());
    cJSON *mem = cJSON_AddObjectToObject(ctx, "memory");
    cJSON_AddNumberToObject(mem, "total_bytes", (double)mb_ram_bytes());
    cJSON_AddNumberToObject(mem, "available_bytes", (double)mb_ram_available_bytes());
    cJSON_AddItemToObject(ctx, "os", os_json());
    cJSON_AddItemToObject(ctx, "build", build_json());
    cJSON_AddItemToObject(ctx, "disk", disk_json(disk_dir ? disk_dir : "."));
    cJSON_AddItemToObject(ctx, "environment", mb_context_environment(NULL));
    cJSON_AddItemToObject(ctx, "launcher", mb_context_launcher(NULL));
    mb_gpu_context_add(ctx);
    return ctx;
}

/* ---- the launcher ------------------------------------------------------------ */

static const char *env_in(char *const *envp, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
            return envp[i] + len + 1;
    return NULL;
}

/* The first of `names` set in envp (NULL-terminated list). */
static const char *env_first(char *const *envp, const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        const char *v = env_in(envp, names[i]);
        if (v && *v)
            return v;
    }
    return NULL;
}

static void add_env_string(cJSON *o, const char *key, char *const *envp, const char *const *names)
{
    const char *v = env_first(envp, names);
    if (v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* Which launcher started this process, from the variables each one sets.
 * Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE (also when it runs inside a
 * Slurm allocation); srun, SLURM_STEP_ID; MPICH's and Intel MPI's Hydra,
 * PMI_RANK; a PMIx launcher (prterun), PMIX_RANK. */
static const char *launcher_name(char *const *envp)
{
    if (env_in(envp, "OMPI_COMM_WORLD_SIZE"))
        return "mpirun";
    if (env_in(envp, "SLURM_STEP_ID") && env_in(envp, "SLURM_PROCID"))
        return "srun";
    if (env_in(envp, "PMI_RANK"))
        return "mpiexec (PMI)";
    if (env_in(envp, "PMIX_RANK"))
        return "PMIx launcher";
    return NULL;
}

static bool is_launcher_command(const char *comm)
{
    static const char *const names[] = { "mpirun", "mpiexec", "orterun", "prterun", "prun", "srun",
                                         "mpiexec.hydra", "mpiexec.openmpi", "mpirun.openmpi", NULL };
    for (int i = 0; names[i]; i++)
        if (strcmp(comm, names[i]) == 0)
            return true;
    return false;
}

/* The command line of the nearest ancestor that is a launcher (mpirun, srun,
 * ...) under `proc` (/proc), arguments joined by spaces; false when no
 * ancestor is one: on another node than mpirun's, the parent is Open MPI's
 * orted or slurmstepd, and the user's command line is not on this machine. */
bool mb_context_launcher_command_at(const char *proc, long pid, char *out, size_t len)
{
    out[0] = '\0';
    for (int depth = 0; depth < 32 && pid > 1; depth++) {
        char path[PATH_MAX], line[1024];
        snprintf(path, sizeof path, "%s/%ld/stat", proc, pid);
        if (!mb_read_first_line(path, line, sizeof line))
            return false;
        /* pid (comm) state ppid ...: comm may hold spaces and parentheses. */
        char *open = strchr(line, '('), *close = strrchr(line, ')');
        long ppid = 0;
        if (open == NULL || close == NULL || sscanf(close + 1, " %*c %ld", &ppid) != 1)
            return false;
        *close = '\0';
        if (is_launcher_command(open + 1)) {
            snprintf(path, sizeof path, "%s/%ld/cmdline", proc, pid);
            FILE *f = fopen(path, "r");
            if (f == NULL)
                return false;
            size_t n = fread(out, 1, len - 1, f);
            fclose(f);
            while (n > 0 && out[n - 1] == '\0')
                n--;
            for (size_t i = 0; i < n; i++)
                if (out[i] == '\0')
                    out[i] = ' ';
            out[n] = '\0';
            return n > 0;
        }
        pid = ppid;
    }
    return false;
}

/* The MPI library's own description (MPI_Get_library_version, allowed
 * before MPI_Init), its first line: "Open MPI v4.1.4, package: ...". */
static void mpi_library(char *out, size_t len)
{
    out[0] = '\0';
#ifdef MB_HAVE_MPI
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int n = 0;
    if (MPI_Get_library_version(lib, &n) == MPI_SUCCESS) {
        lib[strcspn(lib, "\n")] = '\0';
        snprintf(out, len, "%s", lib);
    }
#else
    (void)len;
#endif
}

cJSON *mb_context_launcher(char *const *envp)
{
    extern char **environ;
    char *const *env = envp ? envp : environ;
    cJSON *l = cJSON_CreateObject();
    const char *name = launcher_name(env);
    if (name)
        cJSON_AddStringToObject(l, "name", name);
    else
        cJSON_AddNullToObject(l, "name");
    char cmd[2048] = "";
    if (envp == NULL && mb_context_launcher_command_at("/proc", (long)getppid(), cmd, sizeof cmd))
        cJSON_AddStringToObject(l, "command_line", cmd);
    else
        cJSON_AddNullToObject(l, "command_line");
    static const char *const size_names[] = { "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS",
                                              "PMI_SIZE", NULL };
    const char *size = env_first(env, size_names);
    if (size)
        cJSON_AddNumberToObject(l, "world_size", atof(size));
    else
        cJSON_AddNullToObject(l, "world_size");
    char lib[256];
    mpi_library(lib, sizeof lib);
    if (lib[0])
        cJSON_AddStringToObject(l, "mpi_library", lib);
    else
        cJSON_AddNullToObject(l, "mpi_library");
    add_env_string(l, "pmix_version", env, (const char *const[]){ "PMIX_VERSION", NULL });
    if (env_in(env, "SLURM_JOB_ID") || env_in(env, "SLURM_JOBID")) {
        cJSON *s = cJSON_AddObjectToObject(l, "slurm");
        add_env_string(s, "job_id", env, (const char *const[]){ "SLURM_JOB_ID", "SLURM_JOBID", NULL });
        add_env_string(s, "step_id", env, (const char *const[]){ "SLURM_STEP_ID", "SLURM_STEPID", NULL });
        add_env_string(s, "job_name", env, (const char *const[]){ "SLURM_JOB_NAME", NULL });
        add_env_string(s, "cluster", env, (const char *const[]){ "SLURM_CLUSTER_NAME", NULL });
        add_env_string(s, "partition", env, (const char *const[]){ "SLURM_JOB_PARTITION", NULL });
        add_env_string(s, "node_list", env,
                       (const char *const[]){ "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST", NULL });
        add_env_string(s, "nodes", env, (const char *const[]){ "SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES",
                                                               "SLURM_NNODES", NULL });
        add_env_string(s, "ntasks", env, (const char *const[]){ "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", NULL });
        add_env_string(s, "tasks_per_node", env,
                       (const char *const[]){ "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", NULL });
        add_env_string(s, "cpus_per_task", env, (const char *const[]){ "SLURM_CPUS_PER_TASK", NULL });
        add_env_string(s, "mpi_type", env, (const char *const[]){ "SLURM_MPI_TYPE", NULL });
    }
    return l;
}
