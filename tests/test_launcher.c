/* test_launcher.c: what a multi-node run records about how it was started
 * (harness/context.c, harness/dist.c): the MPI stack's settings in
 * context.environment without the launcher's plumbing, context.launcher
 * under mpirun and srun, the launcher's command line from /proc, network
 * interfaces with their reported speed and a virtual flag, and ranks of one
 * machine that share CPUs. Inputs are hand-made (environments, /proc and
 * /sys trees in a temporary directory, fleet_ranks JSON). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "dist.h"
#include "dist_extra.h"
#include "nic.h"

/* ---- a scratch tree ------------------------------------------------------------ */

static char root[PATH_MAX];

static void make_root(void)
{
    snprintf(root, sizeof root, "/tmp/mb_test_launcher.XXXXXX");
    assert_non_null(mkdtemp(root));
}

static void put(const char *rel, const char *text, size_t len)
{
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    /* parents first */
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    if (text == NULL) {
        mkdir(path, 0755);
        return;
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void put_line(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

static void remove_root(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root); /* our own mkdtemp directory only */
    assert_int_equal(system(cmd), 0);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- context.environment ----------------------------------------------------------- */

/* Open MPI's mpirun hands its --mca settings to every rank as OMPI_MCA_*
 * next to its own plumbing (addresses, session directories, a per-job
 * secret key): the settings are recorded, the plumbing is not. */
static void test_environment_mpi_stack(void **s)
{
    (void)s;
    char *run[] = { "OMPI_MCA_btl=tcp,self", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                    "OMPI_MCA_coll_tuned_allreduce_algorithm=4", "OMPI_MCA_orte_precondition_transports=ab-cd",
                    "OMPI_MCA_orte_hnp_uri=1.0;tcp://10.0.0.1:4000", "OMPI_MCA_ess_base_jobid=17",
                    "OMPI_MCA_ess=^singleton", "OMPI_MCA_pmix=^s1,s2", "OMPI_MCA_initial_wdir=/tmp",
                    "OMPI_COMM_WORLD_RANK=0", "UCX_TLS=rc,sm", "PMIX_MCA_psec=native",
                    "PMIX_SERVER_URI4=1.0;tcp4://127.0.0.1:1", "PMIX_RANK=0", "SLURM_JOB_ID=5",
                    "SLURM_CPU_BIND=cores", "SLURM_MPI_TYPE=pmix", "SLURM_PROCID=0", "I_MPI_FABRICS=shm:ofi",
                    "FI_PROVIDER=tcp", "PATH=/bin", NULL };
    cJSON *env = mb_context_environment(run);
    const char *kept[] = { "OMPI_MCA_btl", "OMPI_MCA_coll_tuned_use_dynamic_rules",
                           "OMPI_MCA_coll_tuned_allreduce_algorithm", "UCX_TLS", "PMIX_MCA_psec",
                           "SLURM_CPU_BIND", "SLURM_MPI_TYPE", "I_MPI_FABRICS", "FI_PROVIDER", NULL };
    int n = 0;
    for (; kept[n]; n++)
        assert_non_null(cJSON_GetObjectItemCaseSensitive(env, kept[n]));
    assert_int_equal(cJSON_GetArraySize(env), n);
    assert_string_equal(str(env, "OMPI_MCA_coll_tuned_allreduce_algorithm"), "4");
    assert_null(cJSON_GetObjectItemCaseSensitive(env, "OMPI_MCA_orte_precondition_transports"));
    assert_null(cJSON_GetObjectItemCaseSensitive(env, "SLURM_JOB_ID"));

    /* Two runs that differ only in the forced algorithm can be told apart. */
    char *other[sizeof run / sizeof run[0]];
    memcpy(other, run, sizeof run);
    other[2] = "OMPI_MCA_coll_tuned_allreduce_algorithm=3";
    cJSON *env2 = mb_context_environment(other);
    assert_false(cJSON_Compare(env, env2, true));
    /* ... and runs that differ only in the launcher's plumbing cannot. */
    other[2] = run[2];
    other[4] = "OMPI_MCA_orte_hnp_uri=9.0;tcp://10.0.0.9:5000";
    other[12] = "PMIX_SERVER_URI4=9.0;tcp4://127.0.0.1:2";
    cJSON *env3 = mb_context_environment(other);
    assert_true(cJSON_Compare(env, env3, true));
    cJSON_Delete(env);
    cJSON_Delete(env2);
    cJSON_Delete(env3);
}

/* ---- context.launcher ---------------------------------------------------------------- */

static void test_launcher_srun(void **s)
{
    (void)s;
    char *env[] = { "SLURM_JOB_ID=4242",          "SLURM_STEP_ID=0",         "SLURM_PROCID=1",
                    "SLURM_JOB_NODELIST=gpu[01-02]", "SLURM_STEP_NODELIST=gpu[01-02]", "SLURM_TASKS_PER_NODE=4(x2)",
                    "SLURM_STEP_TASKS_PER_NODE=4(x2)", "SLURM_NTASKS=8", "SLURM_STEP_NUM_TASKS=8",
                    "SLURM_JOB_NUM_NODES=2",     "SLURM_JOB_PARTITION=batch", "SLURM_MPI_TYPE=pmix",
                    "PMIX_VERSION=4.2.2",        "PMIX_RANK=1",             NULL };
    cJSON *l = mb_context_launcher(env);
    assert_string_equal(str(l, "name"), "srun");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(l, "command_line")));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(l, "world_size")->valueint, 8);
    assert_string_equal(str(l, "pmix_version"), "4.2.2");
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(l, "slurm");
    assert_non_null(sl);
    assert_string_equal(str(sl, "job_id"), "4242");
    assert_string_equal(str(sl, "node_list"), "gpu[01-02]");
    assert_string_equal(str(sl, "tasks_per_node"), "4(x2)");
    assert_string_equal(str(sl, "ntasks"), "8");
    assert_string_equal(str(sl, "nodes"), "2");
    assert_string_equal(str(sl, "partition"), "batch");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sl, "cpus_per_task")));
    cJSON_Delete(l);
}

/* mpirun inside a Slurm allocation: Open MPI's launch, with the job's facts. */
static void test_launcher_mpirun(void **s)
{
    (void)s;
    char *env[] = { "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_RANK=2", "SLURM_JOB_ID=7", "SLURM_NODELIST=a,b,c",
                    "SLURM_NNODES=3", NULL };
    cJSON *l = mb_context_launcher(env);
    assert_string_equal(str(l, "name"), "mpirun");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(l, "world_size")->valueint, 3);
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(l, "slurm");
    assert_string_equal(str(sl, "job_id"), "7");
    assert_string_equal(str(sl, "node_list"), "a,b,c");
    assert_string_equal(str(sl, "nodes"), "3");
    cJSON_Delete(l);

    char *none[] = { "PATH=/bin", NULL };
    l = mb_context_launcher(none);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(l, "name")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(l, "world_size")));
    assert_null(cJSON_GetObjectItemCaseSensitive(l, "slurm"));
    cJSON_Delete(l);

    char *hydra[] = { "PMI_RANK=0", "PMI_SIZE=4", NULL };
    l = mb_context_launcher(hydra);
    assert_string_equal(str(l, "name"), "mpiexec (PMI)");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(l, "world_size")->valueint, 4);
    cJSON_Delete(l);
}

/* The nearest launcher ancestor's command line, from a hand-made /proc:
 * mlbench <- orted <- mpirun; a command name with spaces and parentheses. */
static void test_launcher_command_line(void **s)
{
    (void)s;
    make_root();
    put_line("100/stat", "100 (mlbench) R 90 100 1 0 -1 4194560 0 0\n");
    put_line("90/stat", "90 (orted (x) y) S 80 90 1 0 -1 4194560 0 0\n");
    put_line("80/stat", "80 (mpirun) S 1 80 1 0 -1 4194560 0 0\n");
    static const char cmdline[] = "mpirun\0--mca\0btl\0tcp,self\0-np\0003\0mlbench\0";
    put("80/cmdline", cmdline, sizeof cmdline - 1);
    put_line("200/stat", "200 (mlbench) R 190 1 1 0 -1 0 0 0\n");
    put_line("190/stat", "190 (bash) S 1 1 1 0 -1 0 0 0\n");
    char out[256];
    assert_true(mb_context_launcher_command_at(root, 100, out, sizeof out));
    assert_string_equal(out, "mpirun --mca btl tcp,self -np 3 mlbench");
    /* a node that only has orted/slurmstepd: no command line */
    assert_false(mb_context_launcher_command_at(root, 200, out, sizeof out));
    assert_string_equal(out, "");
    /* a process that is gone */
    assert_false(mb_context_launcher_command_at(root, 300, out, sizeof out));
    remove_root();
}

/* ---- network interfaces ---------------------------------------------------------------- */

static void test_nics_virtual(void **s)
{
    (void)s;
    make_root();
    put_line("net/eth0/operstate", "up\n");
    put_line("net/eth0/speed", "25000\n");
    put("net/eth0/device", NULL, 0); /* stands for the PCI device link */
    put_line("net/veth0/operstate", "up\n");
    put_line("net/veth0/speed", "10000\n");
    put_line("net/br0/operstate", "up\n"); /* a bridge: reading speed fails */
    put_line("net/tun0/operstate", "unknown\n");
    put_line("net/tun0/speed", "-1\n");
    put_line("net/eth1/operstate", "down\n");
    put_line("net/eth1/speed", "100000\n");
    put("net/eth1/device", NULL, 0);
    put_line("net/lo/operstate", "unknown\n");
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/net", root);
    cJSON *nics = mb_nics_json_at(dir);
    assert_int_equal(cJSON_GetArraySize(nics), 4); /* eth1 down, lo left out */
    const char *names[] = { "br0", "eth0", "tun0", "veth0" };
    const double speeds[] = { -1, 25000, -1, 10000 };
    const bool virt[] = { true, false, true, true };
    for (int i = 0; i < 4; i++) {
        const cJSON *n = cJSON_GetArrayItem(nics, i);
        assert_string_equal(str(n, "name"), names[i]);
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(n, "speed_mbps");
        if (speeds[i] < 0)
            assert_true(cJSON_IsNull(sp));
        else
            assert_true(cJSON_IsNumber(sp) && sp->valuedouble == speeds[i]);
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(n, "virtual")), virt[i]);
    }
    char text[256];
    assert_int_equal(mb_nics_virtual_text_at(dir, text, sizeof text), 3);
    assert_string_equal(text, "br0 (no speed), tun0 (no speed), veth0 10000 Mb/s");
    cJSON_Delete(nics);
    /* no such directory: an empty list, no error */
    nics = mb_nics_json_at("/nonexistent/mlbench/net");
    assert_int_equal(cJSON_GetArraySize(nics), 0);
    cJSON_Delete(nics);
    remove_root();
}

/* ---- ranks sharing CPUs ------------------------------------------------------------------ */

/* fleet_ranks from "host machine cpus logical_cpus" per rank. */
static cJSON *ranks_of(const char *const *spec)
{
    cJSON *a = cJSON_CreateArray();
    for (int r = 0; spec[r]; r++) {
        char host[32], machine[32], cpus[64];
        int online;
        assert_int_equal(sscanf(spec[r], "%31s %31s %63s %d", host, machine, cpus, &online), 4);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "host", host);
        cJSON *ctx = cJSON_AddObjectToObject(e, "context");
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(ctx, "cpu"), "logical_cpus", online);
        cJSON *d = cJSON_AddObjectToObject(ctx, "dist");
        if (strcmp(cpus, "-") != 0)
            cJSON_AddStringToObject(d, "cpu_affinity", cpus);
        cJSON_AddStringToObject(d, "machine_id", machine);
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

static int findings(const char *const *spec, char *reason, size_t len)
{
    cJSON *ranks = ranks_of(spec);
    cJSON *f = mb_dist_core_sharing(ranks);
    int n = cJSON_GetArraySize(f);
    if (reason && n > 0)
        snprintf(reason, len, "%s", str(cJSON_GetArrayItem(f, 0), "reason"));
    cJSON_Delete(f);
    cJSON_Delete(ranks);
    return n;
}

static void test_core_sharing(void **s)
{
    (void)s;
    char why[1024];
    /* mpirun --bind-to core on two "nodes" of one machine: both on core 0 */
    const char *same_core[] = { "nodeA m1 0 8", "nodeB m1 0 8", NULL };
    assert_int_equal(findings(same_core, why, sizeof why), 1);
    assert_non_null(strstr(why, "ranks 0 (nodeA) and 1 (nodeB)"));
    /* bound to their own cores: fine */
    const char *own_cores[] = { "n m1 0-3 8", "n m1 4-7 8", NULL };
    assert_int_equal(findings(own_cores, NULL, 0), 0);
    /* unbound, enough CPUs: the scheduler spreads them */
    const char *unbound[] = { "n m1 0-7 8", "n m1 0-7 8", NULL };
    assert_int_equal(findings(unbound, NULL, 0), 0);
    /* unbound, three ranks on two CPUs */
    const char *too_few[] = { "a m1 0-1 2", "b m1 0-1 2", "c m1 0-1 2", NULL };
    assert_int_equal(findings(too_few, why, sizeof why), 1);
    assert_non_null(strstr(why, "3 ranks on one machine (a, b, c) may run on 2 CPUs (0-1)"));
    /* the same CPU numbers on two machines share nothing */
    const char *two_machines[] = { "a m1 0 8", "b m2 0 8", NULL };
    assert_int_equal(findings(two_machines, NULL, 0), 0);
    /* one finding per machine */
    const char *both[] = { "a m1 0 8", "b m1 0 8", "c m2 1 8", "d m2 1,5 8", NULL };
    assert_int_equal(findings(both, NULL, 0), 2);
    /* no affinity recorded (an older results file): nothing claimed */
    const char *unknown[] = { "a m1 - 8", "b m1 - 8", NULL };
    assert_int_equal(findings(unknown, NULL, 0), 0);
    /* a malformed list is not read as CPUs */
    const char *bad[] = { "a m1 0-x 8", "b m1 0-x 8", NULL };
    assert_int_equal(findings(bad, NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_environment_mpi_stack), cmocka_unit_test(test_launcher_srun),
        cmocka_unit_test(test_launcher_mpirun),       cmocka_unit_test(test_launcher_command_line),
        cmocka_unit_test(test_nics_virtual),          cmocka_unit_test(test_core_sharing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
