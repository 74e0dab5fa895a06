/* coll_mpi.c: collectives on host buffers with MPI (MPI_Allreduce,
 * MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast): the ceiling of
 * CPU-side gradient exchange, and what a CPU-only cluster can do.
 *
 * Four tables (allreduce, allgather, reducescatter, broadcast) over one
 * implementation. Each run() is one collective (or `batch` back to back)
 * between an untimed barrier and an untimed MPI_Allreduce(MAX) of the
 * measured seconds, so every rank reports the same, slowest rank's time.
 * Rate = bus bandwidth (nccl-tests' busbw) in GB/s: work_per_iter =
 * bytes * busbw factor; with one rank (mpirun -np 1) busbw is 0 and the rate
 * is algbw (mb_coll_work_factor). See docs/collectives.md. */
#include "coll_common.h"
#include "host.h" /* mb_mem_fits */
#include "services.h"

#ifdef MB_HAVE_MPI

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic.h"

typedef struct coll_mpi {
    mb_coll_shape shape;
    mb_coll_pattern pattern;
    bool inplace;
    int batch, rank;
    long long collectives; /* done since timing_start (setup's warm-up before it) */
    MPI_Comm comm;
    MPI_Datatype type;
    void *send, *recv; /* send unused in place */
    mb_coll_samples samples;
    double peak;
    char peak_source[320];
    char note[512];
    char algorithm[256];
} coll_mpi;

static int coll_mpi_probe(const mb_params *p, mb_err *why)
{
    /* One rank under a launcher runs, as NCCL on one GPU does: busbw 0, the
     * rate is algbw (mb_coll_report_common says why). */
    if (mb_dist_comm() == MPI_COMM_NULL)
        return mb_errf(why, MB_ESKIP, "needs MPI ranks: start with mpirun -np N or srun "
                                      "(this process is not under an MPI launcher)");
    if (p == NULL)
        return MB_OK;
    const char *dtype = mb_param_str(p, "dtype");
    if (strcmp(dtype, "half") == 0 || strcmp(dtype, "bf16") == 0)
        return mb_errf(why, MB_ESKIP, "no standard MPI datatype for %s: use backend=nccl", dtype);
    return MB_OK;
}

static int do_collective(coll_mpi *s, mb_err *err)
{
    const mb_coll_shape *sh = &s->shape;
    int count = (int)sh->count, rc = MPI_SUCCESS;
    const void *in = s->inplace ? MPI_IN_PLACE : s->send;
    switch (sh->coll) {
    case MB_COLL_ALLREDUCE:
        rc = MPI_Allreduce(in, s->recv, count, s->type, MPI_SUM, s->comm);
        break;
    case MB_COLL_ALLGATHER:
        rc = MPI_Allgather(in, count, s->type, s->recv, count, s->type, s->comm);
        break;
    case MB_COLL_REDUCESCATTER:
        rc = MPI_Reduce_scatter_block(in, s->recv, count, s->type, MPI_SUM, s->comm);
        break;
    case MB_COLL_BROADCAST:
        rc = MPI_Bcast(s->recv, count, s->type, 0, s->comm);
        break;
    }
    s->collectives++;
    return mb_mpi_err(rc, err, mb_coll_name(sh->coll));
}

/* Known inputs in place, poison (-1) where results will land. */
static void fill_buffers(coll_mpi *s)
{
    const mb_coll_shape *sh = &s->shape;
    mb_coll_dtype t = sh->dtype;
    size_t es = mb_coll_dtype_size(t);
    if (!s->inplace) {
        mb_coll_fill_input(&s->pattern, sh, s->rank, s->send, 0, sh->in_elems);
        mb_coll_fill_value(t, s->recv, sh->out_elems, -1);
        return;
    }
    switch (sh->coll) {
    case MB_COLL_ALLGATHER: /* own part at rank*count, the rest poisoned */
        mb_coll_fill_value(t, s->recv, sh->out_elems, -1);
        mb_coll_fill_input(&s->pattern, sh, s->rank, (char *)s->recv + (size_t)s->rank * sh->count * es,
                           0, sh->count);
        break;
    case MB_COLL_BROADCAST:
        if (s->rank == 0)
            mb_coll_fill_input(&s->pattern, sh, 0, s->recv, 0, sh->count);
        else
            mb_coll_fill_value(t, s->recv, sh->count, -1);
        break;
    default: /* all-reduce, reduce-scatter: the whole input; MPI writes the result over it */
        mb_coll_fill_input(&s->pattern, sh, s->rank, s->recv, 0, sh->in_elems);
        break;
    }
}

static void coll_mpi_teardown(void *state)
{
    coll_mpi *s = state;
    if (s == NULL)
        return;
    free(s->send);
    free(s->recv);
    mb_coll_samples_free(&s->samples);
    free(s);
}

/* Checks of this rank's share of the case, before anything collective. */
static int setup_local(coll_mpi *s, mb_collective coll, const mb_params *p, mb_err *err)
{
    mb_coll_dtype dtype;
    int rc = mb_coll_dtype_parse(mb_param_str(p, "dtype"), &dtype, err);
    if (rc == MB_OK)
        rc = mb_coll_shape_init(&s->shape, coll, dtype, mb_param_int(p, "size"), s->shape.nranks, err);
    if (rc == MB_OK)
        rc = mb_coll_pattern_init(&s->pattern, dtype, s->shape.nranks, 0x6d6c62656e6368ull, err);
    if (rc != MB_OK)
        return rc;
    if (coll == MB_COLL_BROADCAST && !s->inplace)
        return mb_errf(err, MB_ESKIP, "MPI_Bcast works in place only: use inplace=1");
    const mb_coll_shape *sh = &s->shape;
    if ((double)sh->out_elems > INT_MAX || (double)sh->in_elems > INT_MAX)
        return mb_errf(err, MB_ESKIP, "%zu elements exceed MPI's int count", sh->in_elems);
    s->type = dtype == MB_DT_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;

    size_t es = mb_coll_dtype_size(dtype);
    size_t in_bytes = sh->in_elems * es, out_bytes = sh->out_elems * es;
    if (s->inplace) { /* one buffer, as large as the larger of the two */
        out_bytes = in_bytes > out_bytes ? in_bytes : out_bytes;
        in_bytes = 0;
    }
    double node_bytes = (double)(in_bytes + out_bytes) * mb_dist_local_size();
    char what[64];
    snprintf(what, sizeof what, "the buffers of %d rank%s on this node", mb_dist_local_size(),
             mb_dist_local_size() == 1 ? "" : "s");
    if ((rc = mb_mem_fits(node_bytes, what, err)) != MB_OK)
        return rc;
    if ((in_bytes && posix_memalign(&s->send, 4096, in_bytes) != 0) ||
        posix_memalign(&s->recv, 4096, out_bytes) != 0)
        return mb_errf(err, MB_ESKIP, "cannot allocate %.2f GiB of host memory",
                       (in_bytes + out_bytes) / 1073741824.0);
    fill_buffers(s);
    return MB_OK;
}

static void find_peak(coll_mpi *s)
{
    if (mb_dist_nodes() == 1) {
        snprintf(s->note, sizeof s->note,
                 "one node: MPI moves the data through shared memory, bounded by host memory "
                 "bandwidth (see the hostmem ceilings); no link peak is claimed");
        return;
    }
    char names[200];
    double nic = mb_nic_gbps(names, sizeof names);
    mb_dist_min_double(&nic, NULL); /* the slowest node bounds the ring */
    if (nic > 0) {
        s->peak = nic;
        snprintf(s->peak_source, sizeof s->peak_source,
                 "network: sum of the up links of the slowest node (/sys/class/net; here %s)", names);
    } else {
        char virt[200];
        size_t n_virtual = mb_nics_virtual_text(virt, sizeof virt);
        if (n_virtual > 0) /* containers, pods, namespaces: the veth's speed is a driver constant */
            snprintf(s->note, sizeof s->note,
                     "%d nodes, linked here by virtual interfaces only (%s, as their driver reports it, not what "
                     "carries the traffic): no peak claimed; compare busbw with a measured link (iperf3)",
                     mb_dist_nodes(), virt);
        else
            snprintf(s->note, sizeof s->note,
                     "%d nodes, but some node reports no network link speed (/sys/class/net/*/speed): no peak",
                     mb_dist_nodes());
    }
}

/* Reads an int or bool MPI_T control variable (Open MPI exposes its bool MCA
 * variables as MPI_C_BOOL); with `enum_name`, the name of its value when the
 * variable is an enumeration. False when the library has no such variable
 * (another MPI, or the component not loaded). */
static bool read_cvar_int(const char *cvar, int *value, char *enum_name, size_t len)
{
    int idx, count, verbosity, bind, scope, name_len = 0, desc_len = 0;
    MPI_Datatype type;
    MPI_T_enum etype = MPI_T_ENUM_NULL;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index(cvar, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(idx, NULL, &name_len, &verbosity, &type, &etype, NULL, &desc_len, &bind, &scope) !=
            MPI_SUCCESS ||
        (type != MPI_INT && type != MPI_C_BOOL) || bind != MPI_T_BIND_NO_OBJECT)
        return false;
    if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return false;
    bool ok = false, flag = false;
    if (count == 1 && type == MPI_C_BOOL && MPI_T_cvar_read(h, &flag) == MPI_SUCCESS) {
        *value = flag;
        ok = true;
    } else if (count == 1 && type == MPI_INT) {
        ok = MPI_T_cvar_read(h, value) == MPI_SUCCESS;
    }
    MPI_T_cvar_handle_free(&h);
    if (ok && enum_name && len) {
        enum_name[0] = '\0';
        int items = 0;
        char ename[64];
        int elen = sizeof ename;
        if (etype != MPI_T_ENUM_NULL && MPI_T_enum_get_info(etype, &items, ename, &elen) == MPI_SUCCESS)
            for (int i = 0; i < items; i++) {
                int v = 0, nlen = (int)len;
                if (MPI_T_enum_get_item(etype, i, &v, enum_name, &nlen) == MPI_SUCCESS && v == *value)
                    break;
                enum_name[0] = '\0';
            }
    }
    return ok;
}

/* The algorithm, where the library says which: Open MPI's coll/tuned runs
 * the one forced by coll_tuned_use_dynamic_rules=1 and
 * coll_tuned_<collective>_algorithm=N (MCA variables, read through MPI_T);
 * otherwise its fixed decision rules pick one by size and rank count, and
 * nothing reports which (on 3 ranks Open MPI 4.1's all-reduce default is no
 * ring: busbw is then not comparable with the link, docs/collectives.md). */
static void find_algorithm(coll_mpi *s)
{
    static const char *const vars[] = { [MB_COLL_ALLREDUCE] = "coll_tuned_allreduce_algorithm",
                                        [MB_COLL_ALLGATHER] = "coll_tuned_allgather_algorithm",
                                        [MB_COLL_REDUCESCATTER] = "coll_tuned_reduce_scatter_block_algorithm",
                                        [MB_COLL_BROADCAST] = "coll_tuned_bcast_algorithm" };
    const char *var = vars[s->shape.coll];
    snprintf(s->algorithm, sizeof s->algorithm, "not reported by the MPI library");
    int provided = 0, dynamic = 0, forced = 0;
    char name[64] = "";
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    if (!read_cvar_int("coll_tuned_use_dynamic_rules", &dynamic, NULL, 0)) {
        /* not Open MPI's coll/tuned: nothing to read */
    } else if (dynamic && read_cvar_int(var, &forced, name, sizeof name) && forced > 0) {
        snprintf(s->algorithm, sizeof s->algorithm, "%s (forced: coll_tuned_use_dynamic_rules=1, %s=%d)",
                 name[0] ? name : "?", var, forced);
    } else {
        snprintf(s->algorithm, sizeof s->algorithm,
                 "Open MPI coll/tuned's fixed decision rules (which algorithm is not reported; force one with "
                 "coll_tuned_use_dynamic_rules=1 and %s)", var);
    }
    MPI_T_finalize();
}

static int coll_mpi_setup(mb_collective coll, const mb_params *p, void **state, mb_err *err)
{
    *state = NULL;
    coll_mpi *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    s->comm = mb_dist_comm();
    s->rank = mb_dist_rank();
    s->shape.nranks = mb_dist_size();
    s->inplace = mb_param_bool(p, "inplace");
    s->batch = (int)mb_param_int(p, "batch");

    int rc = setup_local(s, coll, p, err);
    rc = mb_dist_agree_err(rc, err); /* all ranks go on, or none */
    for (long long i = 0; rc == MB_OK && i < mb_param_int(p, "warmup"); i++)
        rc = do_collective(s, err);
    if (rc == MB_OK)
        rc = mb_mpi_err(MPI_Barrier(s->comm), err, "MPI_Barrier");
    rc = mb_dist_agree_err(rc, err);
    if (rc == MB_OK) {
        find_peak(s);
        find_algorithm(s);
    }
    if (rc != MB_OK) {
        coll_mpi_teardown(s);
        return rc;
    }
    *state = s;
    return MB_OK;
}

static int coll_mpi_run(void *state, double *seconds, mb_err *err)
{
    coll_mpi *s = state;
    int rc = mb_mpi_err(MPI_Barrier(s->comm), err, "MPI_Barrier");
    if (rc != MB_OK)
        return rc;
    double t0 = mb_now();
    for (int b = 0; b < s->batch && rc == MB_OK; b++)
        rc = do_collective(s, err);
    double mine = mb_now() - t0, slowest = mine;
    if (rc != MB_OK)
        return rc;
    rc = mb_mpi_err(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, s->comm), err,
                    "MPI_Allreduce(MAX) of the times");
    if (rc != MB_OK)
        return rc;
    *seconds = slowest;
    return mb_coll_samples_add(&s->samples, slowest, err);
}

/* After the runner's warm-up: its times leave the samples, and out of place
 * the output is poisoned (all-ones bytes: NaN or -1, never an expected
 * value), so verify() sees what the timed iterations wrote, not a result
 * the warm-up left. Local work only: no rank waits on another here. */
static void coll_mpi_timing_start(void *state)
{
    coll_mpi *s = state;
    mb_coll_samples_free(&s->samples);
    s->collectives = 0;
    if (!s->inplace)
        memset(s->recv, 0xFF, s->shape.out_elems * mb_coll_dtype_size(s->shape.dtype));
}

static double coll_mpi_work(void *state)
{
    coll_mpi *s = state;
    return s->shape.bytes * mb_coll_work_factor(s->shape.coll, s->shape.nranks) * s->batch;
}

static int coll_mpi_verify(void *state, mb_err *err)
{
    coll_mpi *s = state;
    int rc = MB_OK;
    /* In place, the timed iterations summed the sums: start again from the
     * known inputs. Out of place, recv holds the last timed iteration's
     * result, checked as it is. */
    if (s->inplace || s->collectives == 0) {
        fill_buffers(s);
        rc = mb_mpi_err(MPI_Barrier(s->comm), err, "MPI_Barrier");
        if (rc == MB_OK)
            rc = do_collective(s, err);
    }
    if (rc == MB_OK) {
        /* MPI leaves every result at the start of recv, in place too. */
        mb_coll_mismatch m = { 0 };
        mb_coll_test_corrupt(s->shape.dtype, s->recv, s->shape.out_elems, s->rank);
        mb_coll_check_output(&s->pattern, &s->shape, s->rank, s->recv, 0, s->shape.out_elems, &m);
        rc = mb_coll_mismatch_err(&m, NULL, s->shape.out_elems, err);
    }
    return mb_dist_agree_err(rc, err);
}

static void coll_mpi_report(void *state, mb_report *r)
{
    coll_mpi *s = state;
    mb_coll_report_common(r, &s->shape, &s->samples, s->batch, s->inplace);
    mb_report_info(r, "mpi", mb_dist_describe());
    mb_report_info(r, "algorithm", s->algorithm);
    if (s->peak > 0)
        mb_report_peak(r, s->peak, s->peak_source);
    if (s->note[0])
        mb_report_note(r, "%s", s->note);
    if (mb_dist_core_sharing_note()[0])
        mb_report_note(r, "%s", mb_dist_core_sharing_note());
    if (s->inplace && s->shape.coll != MB_COLL_ALLGATHER && s->shape.coll != MB_COLL_BROADCAST)
        mb_report_note(r, "in place: timed iterations reduce their own results (values grow; "
                          "speed is unaffected); verification re-runs from the known inputs");
}

static int setup_allreduce(const mb_params *p, void **st, mb_err *e) { return coll_mpi_setup(MB_COLL_ALLREDUCE, p, st, e); }
static int setup_allgather(const mb_params *p, void **st, mb_err *e) { return coll_mpi_setup(MB_COLL_ALLGATHER, p, st, e); }
static int setup_reducescatter(const mb_params *p, void **st, mb_err *e) { return coll_mpi_setup(MB_COLL_REDUCESCATTER, p, st, e); }
static int setup_broadcast(const mb_params *p, void **st, mb_err *e) { return coll_mpi_setup(MB_COLL_BROADCAST, p, st, e); }

const mb_backend_code mb_allreduce_mpi = MB_COLL_CODE("allreduce", "mpi", coll_mpi, setup_allreduce);
const mb_backend_code mb_allgather_mpi = MB_COLL_CODE("allgather", "mpi", coll_mpi, setup_allgather);
const mb_backend_code mb_reducescatter_mpi = MB_COLL_CODE("reducescatter", "mpi", coll_mpi, setup_reducescatter);
const mb_backend_code mb_broadcast_mpi = MB_COLL_CODE("broadcast", "mpi", coll_mpi, setup_broadcast);

#else /* !MB_HAVE_MPI */

MB_NOT_BUILT_IN(mb_allreduce_mpi, "allreduce", "mpi", "MPI not found at build time");
MB_NOT_BUILT_IN(mb_allgather_mpi, "allgather", "mpi", "MPI not found at build time");
MB_NOT_BUILT_IN(mb_reducescatter_mpi, "reducescatter", "mpi", "MPI not found at build time");
MB_NOT_BUILT_IN(mb_broadcast_mpi, "broadcast", "mpi", "MPI not found at build time");

#endif
