/* coll_nccl.c: NCCL collectives on GPU buffers (ncclAllReduce, ncclAllGather,
 * ncclReduceScatter, ncclBroadcast), nccl-tests style.
 *
 * Two topologies (parameter `topology`, default auto):
 *  - local: one process drives every visible GPU (ncclCommInitAll; each
 *    iteration is one ncclGroupStart/End over the devices);
 *  - mpi:   one rank per GPU under mpirun/srun; each rank takes the GPU of
 *    its local rank, rank 0's ncclUniqueId goes to all with MPI_Bcast,
 *    ncclCommInitRank; any number of nodes.
 * auto = mpi when started with 2+ ranks, else local.
 *
 * Timing: CUDA events on each device's stream around one collective (or
 * `batch`), after an untimed MPI barrier; the case's seconds are the maximum
 * over local devices and over ranks (MPI_Allreduce MAX), so every rank
 * reports the slowest rank's time. Rate = bus bandwidth in GB/s.
 * Peak: NVLink (datasheet) or PCIe (the GPU's link) within a node, the
 * network's link speed across nodes. See docs/collectives.md. */
#include "coll_common.h"
#include "services.h"

#if defined(MB_HAVE_NCCL) && defined(MB_HAVE_CUDA)

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "hardware.h"
#include "nic.h"
#include "pcie.h"

#define STAGE_BYTES (16u << 20) /* host staging buffer for filling and checking */

typedef struct nccl_dev {
    int device, rank;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    void *send, *recv; /* in place: recv only */
} nccl_dev;

typedef struct coll_nccl {
    mb_coll_shape shape;
    mb_coll_pattern pattern;
    ncclDataType_t type;
    bool inplace, mpi;
    /* A collective failed or timed out: the communicators were aborted
     * (ncclCommDestroy could wait forever for the stuck work). */
    bool broken;
    int batch, ndev;
    nccl_dev *dev;
    long long collectives; /* since timing_start (setup's warm-up not counted) */
    mb_err pending;        /* timing_start's error, returned by the next run() */
    void *stage; /* STAGE_BYTES of host memory */
    mb_coll_samples samples;
    double peak;
    char peak_source[384];
    char link[256];
    char note[256];
} coll_nccl;

static int nccl_err(ncclResult_t r, ncclComm_t comm, mb_err *err, const char *what)
{
    if (r == ncclSuccess)
        return MB_OK;
    const char *last = comm ? ncclGetLastError(comm) : ncclGetLastError(NULL);
    return mb_errf(err, MB_EFAIL, "%s: %s%s%s", what, ncclGetErrorString(r),
                   last && *last ? ": " : "", last ? last : "");
}

/* "2.28.9" from an NCCL version code: X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z
 * before (nccl.h's NCCL_VERSION macro). Exported for tests/test_gpu_contract.c. */
void mb_nccl_version_text(int code, char *buf, size_t len);
void mb_nccl_version_text(int code, char *buf, size_t len)
{
    int major = code >= 10000 ? code / 10000 : code / 1000;
    int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
    snprintf(buf, len, "%d.%d.%d", major, minor, code % 100);
}

/* The NCCL library loaded at run time (LD_LIBRARY_PATH may give another than
 * the headers'); 0 when it does not say. */
static int nccl_runtime_version(void)
{
    int v = 0;
    return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

static int nccl_dtype(mb_coll_dtype t, ncclDataType_t *out, mb_err *err)
{
    switch (t) {
    case MB_DT_FLOAT: *out = ncclFloat32; return MB_OK;
    case MB_DT_DOUBLE: *out = ncclFloat64; return MB_OK;
    case MB_DT_HALF: *out = ncclFloat16; return MB_OK;
    case MB_DT_BF16:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
        *out = ncclBfloat16;
        if (nccl_runtime_version() < NCCL_VERSION(2, 10, 0)) {
            char v[32];
            mb_nccl_version_text(nccl_runtime_version(), v, sizeof v);
            return mb_errf(err, MB_ESKIP, "bf16 needs NCCL 2.10 or newer (loaded: %s)", v);
        }
        return MB_OK;
#else
        return mb_errf(err, MB_ESKIP, "bf16 needs NCCL 2.10 or newer (built with %d.%d)", NCCL_MAJOR,
                       NCCL_MINOR);
#endif
    }
    return mb_errf(err, MB_EUSAGE, "unknown dtype");
}

/* Resolves `topology` against how we were started. */
static int use_mpi(const mb_params *p, bool *mpi, mb_err *why)
{
    const char *t = p ? mb_param_str(p, "topology") : "auto";
    bool ranks = mb_dist_size() > 1;
    *mpi = strcmp(t, "mpi") == 0 || (strcmp(t, "auto") == 0 && ranks);
    if (!*mpi && ranks)
        return mb_errf(why, MB_ESKIP, "topology=local drives every GPU from one process; "
                                      "under mpirun/srun use topology=mpi (or auto)");
#ifndef MB_HAVE_MPI
    if (*mpi)
        return mb_errf(why, MB_ESKIP, "topology=mpi: built without MPI");
#endif
    if (*mpi && !ranks)
        return mb_errf(why, MB_ESKIP, "topology=mpi needs 2 or more ranks: start with mpirun -np N or srun");
    return MB_OK;
}

/* The GPU of this rank: its local rank; or the only GPU it sees, when the
 * launcher gave each task its own (srun --gpus-per-task=1 sets
 * CUDA_VISIBLE_DEVICES per task). -1 when the node has too few. */
static int gpu_of_rank(int count)
{
    if (count == 1)
        return 0;
    return mb_dist_local_rank() < count ? mb_dist_local_rank() : -1;
}

static int local_probe(const mb_params *p, mb_err *why)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return mb_errf(why, MB_ESKIP, "no usable CUDA device: cudaGetDeviceCount: %s: %s",
                       cudaGetErrorName(e), cudaGetErrorString(e));
    bool mpi = false;
    int rc = use_mpi(p, &mpi, why);
    if (rc != MB_OK)
        return rc;
    if (mpi && gpu_of_rank(count) < 0)
        return mb_errf(why, MB_ESKIP, "rank %d is local rank %d on %s, which has %d GPUs "
                                      "(one rank per GPU: start at most %d ranks per node)",
                       mb_dist_rank(), mb_dist_local_rank(), mb_dist_host_of(mb_dist_rank()), count, count);
    int want = p ? (int)mb_param_int(p, "gpus") : 0;
    if (!mpi && want > count)
        return mb_errf(why, MB_ESKIP, "gpus=%d but %d visible", want, count);
    /* gpus = 1, asked for: a one-rank communicator (NCCL allows it; the
     * collective is a local copy) exercises init, launch, timing and the
     * check on a one-GPU machine. Never a ceiling: report() says so. */
    bool smoke = p && !mpi && want == 1;
    if (!mpi && (want ? want : count) < 2 && !smoke)
        return mb_errf(why, MB_ESKIP, "fewer than two GPUs in total (%d visible, one process): "
                                      "a collective needs two (gpus = 1 runs a one-GPU smoke test)",
                       want ? want : count);
    if (p == NULL)
        return MB_OK;
    mb_coll_dtype dt;
    ncclDataType_t nt;
    rc = mb_coll_dtype_parse(mb_param_str(p, "dtype"), &dt, why);
    return rc == MB_OK ? nccl_dtype(dt, &nt, why) : rc;
}

/* Two ranks on one GPU (more ranks than GPUs, each seeing one) would make
 * ncclCommInitRank fail with "duplicate GPU": say so as a skip instead.
 * Collective: every rank of an mpi-topology case calls it. */
static int shared_gpu(mb_err *why)
{
#ifdef MB_HAVE_MPI
    enum { KEY = 96 };
    char mine[KEY] = { 0 }, bus[32] = "";
    int count = 0;
    /* Every rank takes part; one without a GPU sends "" (matches nothing). */
    if (cudaGetDeviceCount(&count) == cudaSuccess && gpu_of_rank(count) >= 0 &&
        cudaDeviceGetPCIBusId(bus, sizeof bus, gpu_of_rank(count)) == cudaSuccess)
        snprintf(mine, sizeof mine, "%s/%s", mb_dist_host_of(mb_dist_rank()), bus);
    int n = mb_dist_size(), rc = MB_OK;
    char *all = calloc((size_t)n, KEY);
    if (all == NULL)
        return mb_errf(why, MB_ESYS, "out of memory");
    if (MPI_Allgather(mine, KEY, MPI_CHAR, all, KEY, MPI_CHAR, mb_dist_comm()) == MPI_SUCCESS)
        for (int r = 0; r < n && rc == MB_OK; r++)
            if (r != mb_dist_rank() && mine[0] && strncmp(all + (size_t)r * KEY, mine, KEY) == 0)
                rc = mb_errf(why, MB_ESKIP, "ranks %d and %d share GPU %s on %s: one rank per GPU "
                                            "(fewer GPUs than ranks)",
                             r < mb_dist_rank() ? r : mb_dist_rank(), r < mb_dist_rank() ? mb_dist_rank() : r,
                             bus, mb_dist_host_of(r));
    free(all);
    return rc;
#else
    (void)why;
    return MB_OK;
#endif
}

static int coll_nccl_probe(const mb_params *p, mb_err *why)
{
    int rc = local_probe(p, why);
    bool mpi = false;
    if (p && use_mpi(p, &mpi, NULL) == MB_OK && mpi) {
        /* Every rank takes part in the exchange, whatever its own verdict. */
        mb_err dup = { 0 };
        int rc2 = shared_gpu(&dup);
        if (rc == MB_OK && rc2 != MB_OK)
            rc = mb_errf(why, rc2, "%s", dup.msg);
    }
    /* A case runs on every rank or on none (a rank without a GPU would leave
     * the others waiting in ncclCommInitRank). */
    return p ? mb_dist_agree_err(rc, why) : rc;
}

/* ---- buffers: known inputs in, poison (-1) where results land --------------- */

static int stage_input(coll_nccl *s, nccl_dev *d, char *dst, size_t first, size_t n, mb_err *err)
{
    size_t es = mb_coll_dtype_size(s->shape.dtype), chunk = STAGE_BYTES / es;
    for (size_t off = 0; off < n; off += chunk) {
        size_t m = n - off < chunk ? n - off : chunk;
        mb_coll_fill_input(&s->pattern, &s->shape, d->rank, s->stage, first + off, m);
        if (mb_cuda_err(cudaMemcpy(dst + off * es, s->stage, m * es, cudaMemcpyHostToDevice), err,
                        "cudaMemcpy(input)") != MB_OK)
            return err->code;
    }
    return MB_OK;
}

static int stage_poison(coll_nccl *s, char *dst, size_t n, mb_err *err)
{
    size_t es = mb_coll_dtype_size(s->shape.dtype), chunk = STAGE_BYTES / es;
    mb_coll_fill_value(s->shape.dtype, s->stage, n < chunk ? n : chunk, -1);
    for (size_t off = 0; off < n; off += chunk) {
        size_t m = n - off < chunk ? n - off : chunk;
        if (mb_cuda_err(cudaMemcpy(dst + off * es, s->stage, m * es, cudaMemcpyHostToDevice), err,
                        "cudaMemcpy(poison)") != MB_OK)
            return err->code;
    }
    return MB_OK;
}

static int fill_device(coll_nccl *s, nccl_dev *d, mb_err *err)
{
    const mb_coll_shape *sh = &s->shape;
    size_t es = mb_coll_dtype_size(sh->dtype);
    if (mb_cuda_err(cudaSetDevice(d->device), err, "cudaSetDevice") != MB_OK)
        return err->code;
    if (!s->inplace) {
        int rc = stage_input(s, d, d->send, 0, sh->in_elems, err);
        return rc == MB_OK ? stage_poison(s, d->recv, sh->out_elems, err) : rc;
    }
    switch (sh->coll) {
    case MB_COLL_ALLGATHER: {
        int rc = stage_poison(s, d->recv, sh->out_elems, err);
        return rc == MB_OK ? stage_input(s, d, (char *)d->recv + (size_t)d->rank * sh->count * es, 0,
                                         sh->count, err)
                           : rc;
    }
    case MB_COLL_BROADCAST:
        return d->rank == 0 ? stage_input(s, d, d->recv, 0, sh->count, err)
                            : stage_poison(s, d->recv, sh->count, err);
    default: /* all-reduce, reduce-scatter: the whole input */
        return stage_input(s, d, d->recv, 0, sh->in_elems, err);
    }
}

/* Inputs in place on every device before a collective reads them: a copy
 * from pageable memory may still be in flight when cudaMemcpy returns, and
 * the NCCL streams are non-blocking (no implicit order with it). */
static int fill_all(coll_nccl *s, mb_err *err)
{
    for (int i = 0; i < s->ndev; i++)
        if (fill_device(s, &s->dev[i], err) != MB_OK ||
            mb_cuda_err(cudaDeviceSynchronize(), err, "cudaDeviceSynchronize") != MB_OK)
            return err->code;
    return MB_OK;
}

/* Where a device's result lies: NCCL's in-place reduce-scatter writes it at
 * rank*count of the buffer, everything else at the start. */
static const char *result_of(const coll_nccl *s, const nccl_dev *d)
{
    size_t es = mb_coll_dtype_size(s->shape.dtype);
    if (s->inplace && s->shape.coll == MB_COLL_REDUCESCATTER)
        return (const char *)d->recv + (size_t)d->rank * s->shape.count * es;
    return d->recv;
}

static int check_device(coll_nccl *s, nccl_dev *d, mb_err *err)
{
    size_t es = mb_coll_dtype_size(s->shape.dtype), chunk = STAGE_BYTES / es, n = s->shape.out_elems;
    const char *src = result_of(s, d);
    mb_coll_mismatch m = { 0 };
    if (mb_cuda_err(cudaSetDevice(d->device), err, "cudaSetDevice") != MB_OK)
        return err->code;
    for (size_t off = 0; off < n; off += chunk) {
        size_t c = n - off < chunk ? n - off : chunk;
        if (mb_cuda_err(cudaMemcpy(s->stage, src + off * es, c * es, cudaMemcpyDeviceToHost), err,
                        "cudaMemcpy(result)") != MB_OK)
            return err->code;
        if (off == 0)
            mb_coll_test_corrupt(s->shape.dtype, s->stage, c, d->rank);
        mb_coll_check_output(&s->pattern, &s->shape, d->rank, s->stage, off, c, &m);
    }
    char where[64];
    snprintf(where, sizeof where, "GPU %d (NCCL rank %d)", d->device, d->rank);
    return mb_coll_mismatch_err(&m, where, n, err);
}

/* ---- the collective -------------------------------------------------------------- */

static ncclResult_t launch(coll_nccl *s, nccl_dev *d)
{
    const mb_coll_shape *sh = &s->shape;
    size_t es = mb_coll_dtype_size(sh->dtype), own = (size_t)d->rank * sh->count * es;
    char *buf = d->recv;
    const void *in = s->inplace ? d->recv : d->send;
    switch (sh->coll) {
    case MB_COLL_ALLREDUCE:
        return ncclAllReduce(in, buf, sh->count, s->type, ncclSum, d->comm, d->stream);
    case MB_COLL_ALLGATHER:
        return ncclAllGather(s->inplace ? buf + own : in, buf, sh->count, s->type, d->comm, d->stream);
    case MB_COLL_REDUCESCATTER:
        return ncclReduceScatter(in, s->inplace ? buf + own : buf, sh->count, s->type, ncclSum, d->comm,
                                 d->stream);
    case MB_COLL_BROADCAST:
        return ncclBroadcast(in, buf, sh->count, s->type, 0, d->comm, d->stream);
    }
    return ncclInvalidArgument;
}

/* Aborts every local communicator, as nccl-tests does on an asynchronous
 * error or a timeout: the kernels of the other local GPUs are stopped too,
 * and teardown must not call ncclCommDestroy, which waits for outstanding
 * work (PyTorch's NCCLComm aborts in its destructor for the same reason). */
static void abort_all(coll_nccl *s)
{
    s->broken = true;
    for (int i = 0; i < s->ndev; i++)
        if (s->dev[i].comm) {
            cudaSetDevice(s->dev[i].device);
            ncclCommAbort(s->dev[i].comm);
            s->dev[i].comm = NULL;
        }
}

/* One collective on every local device (a group, as NCCL requires when one
 * thread drives several GPUs). */
static int launch_all(coll_nccl *s, mb_err *err)
{
    if (s->broken)
        return mb_errf(err, MB_EFAIL, "NCCL communicators were aborted after an earlier error");
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; r == ncclSuccess && i < s->ndev; i++)
        r = launch(s, &s->dev[i]);
    ncclResult_t end = ncclGroupEnd();
    if (r == ncclSuccess)
        r = end;
    s->collectives++;
    int rc = nccl_err(r, s->dev[0].comm, err, mb_coll_name(s->shape.coll));
    if (rc != MB_OK)
        abort_all(s);
    return rc;
}

/* Waits for an event, watching NCCL's asynchronous errors (a peer that died)
 * and the deadline instead of blocking forever in cudaEventSynchronize. The
 * caller aborts the communicators on failure. */
static int wait_event(nccl_dev *d, cudaEvent_t ev, double deadline, mb_err *err)
{
    for (;;) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess)
            return MB_OK;
        if (e != cudaErrorNotReady)
            return mb_cuda_err(e, err, "waiting for the collective");
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(d->comm, &async) == ncclSuccess && async != ncclSuccess &&
            async != ncclInProgress)
            return nccl_err(async, d->comm, err, "NCCL (asynchronous)");
        if (mb_now() > deadline)
            return mb_errf(err, MB_EFAIL, "NCCL collective on GPU %d did not finish within %.0f s "
                                          "(a rank stopped? MLBENCH_DIST_TIMEOUT sets the limit)",
                           d->device, mb_dist_timeout());
        sched_yield();
    }
}

static int sync_all(coll_nccl *s, mb_err *err)
{
    /* One deadline for all local GPUs: a hung collective hangs on every one. */
    double deadline = mb_now() + mb_dist_timeout();
    for (int i = 0; i < s->ndev; i++) {
        nccl_dev *d = &s->dev[i];
        if (mb_cuda_err(cudaSetDevice(d->device), err, "cudaSetDevice") != MB_OK ||
            mb_cuda_err(cudaEventRecord(d->stop, d->stream), err, "cudaEventRecord") != MB_OK ||
            wait_event(d, d->stop, deadline, err) != MB_OK) {
            abort_all(s);
            return err->code;
        }
    }
    return MB_OK;
}

/* MPI barrier before a timed collective, polled against the same deadline
 * as the collectives (a blocking MPI_Barrier would hang on a rank that
 * stopped). MPI_Ibarrier is the library's own barrier algorithm, so the
 * ranks leave it as closely together as from MPI_Barrier. */
static int barrier(coll_nccl *s, mb_err *err)
{
#ifdef MB_HAVE_MPI
    if (!s->mpi)
        return MB_OK;
    MPI_Request req;
    int done = 0, rc = mb_mpi_err(MPI_Ibarrier(mb_dist_comm(), &req), err, "MPI_Ibarrier");
    double deadline = mb_now() + mb_dist_timeout();
    while (rc == MB_OK && !done) {
        rc = mb_mpi_err(MPI_Test(&req, &done, MPI_STATUS_IGNORE), err, "MPI_Test(barrier)");
        if (rc == MB_OK && !done && mb_now() > deadline)
            rc = mb_errf(err, MB_EFAIL, "barrier before the collective: not every rank arrived within %.0f s "
                                        "(MLBENCH_DIST_TIMEOUT sets the limit)",
                         mb_dist_timeout());
    }
    return rc;
#else
    (void)s, (void)err;
    return MB_OK;
#endif
}

/* ---- life of a case ------------------------------------------------------------------ */

static void coll_nccl_teardown(void *state)
{
    coll_nccl *s = state;
    if (s == NULL)
        return;
    for (int i = 0; s->dev && i < s->ndev; i++) {
        nccl_dev *d = &s->dev[i];
        cudaSetDevice(d->device);
        if (d->comm && s->broken)
            ncclCommAbort(d->comm);
        else if (d->comm)
            ncclCommDestroy(d->comm);
        if (d->start)
            cudaEventDestroy(d->start);
        if (d->stop)
            cudaEventDestroy(d->stop);
        if (d->stream)
            cudaStreamDestroy(d->stream);
        cudaFree(d->send);
        cudaFree(d->recv);
    }
    free(s->dev);
    free(s->stage);
    mb_coll_samples_free(&s->samples);
    free(s);
}

/* Streams, events and buffers of one device, filled. */
static int setup_device(coll_nccl *s, nccl_dev *d, mb_err *err)
{
    const mb_coll_shape *sh = &s->shape;
    size_t es = mb_coll_dtype_size(sh->dtype);
    size_t in_b = sh->in_elems * es, out_b = sh->out_elems * es;
    if (s->inplace) {
        out_b = in_b > out_b ? in_b : out_b;
        in_b = 0;
    }
    if (mb_cuda_err(cudaSetDevice(d->device), err, "cudaSetDevice") != MB_OK ||
        mb_cuda_fits(in_b + out_b, err) != MB_OK ||
        mb_cuda_err(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), err,
                    "cudaStreamCreate") != MB_OK ||
        mb_cuda_err(cudaEventCreate(&d->start), err, "cudaEventCreate") != MB_OK ||
        mb_cuda_err(cudaEventCreate(&d->stop), err, "cudaEventCreate") != MB_OK ||
        (in_b && mb_cuda_err(cudaMalloc(&d->send, in_b), err, "cudaMalloc(send)") != MB_OK) ||
        mb_cuda_err(cudaMalloc(&d->recv, out_b), err, "cudaMalloc(recv)") != MB_OK)
        return err->code;
    return MB_OK;
}

/* Everything this process can do alone: devices, buffers, inputs. */
static int setup_local(coll_nccl *s, mb_collective coll, const mb_params *p, mb_err *err)
{
    mb_coll_dtype dtype;
    int count = 0, rc = local_probe(p, err);
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaGetDeviceCount(&count), err, "cudaGetDeviceCount");
    if (rc == MB_OK)
        rc = mb_coll_dtype_parse(mb_param_str(p, "dtype"), &dtype, err);
    if (rc == MB_OK)
        rc = nccl_dtype(dtype, &s->type, err);
    if (rc == MB_OK)
        rc = use_mpi(p, &s->mpi, err);
    if (rc != MB_OK)
        return rc;
    int want = (int)mb_param_int(p, "gpus");
    s->ndev = s->mpi ? 1 : want ? want : count;
    int nranks = s->mpi ? mb_dist_size() : s->ndev;
    s->dev = calloc((size_t)s->ndev, sizeof *s->dev);
    s->stage = malloc(STAGE_BYTES);
    if (s->dev == NULL || s->stage == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    for (int i = 0; i < s->ndev; i++) {
        s->dev[i].device = s->mpi ? gpu_of_rank(count) : i;
        s->dev[i].rank = s->mpi ? mb_dist_rank() : i;
    }
    rc = mb_coll_shape_init(&s->shape, coll, dtype, mb_param_int(p, "size"), nranks, err);
    if (rc == MB_OK)
        rc = mb_coll_pattern_init(&s->pattern, dtype, nranks, 0x6d6c62656e6368ull, err);
    for (int i = 0; rc == MB_OK && i < s->ndev; i++)
        rc = setup_device(s, &s->dev[i], err);
    return rc == MB_OK ? fill_all(s, err) : rc;
}

static int init_comms(coll_nccl *s, mb_err *err)
{
    if (!s->mpi) {
        ncclComm_t *comms = calloc((size_t)s->ndev, sizeof *comms);
        int *devs = calloc((size_t)s->ndev, sizeof *devs);
        int rc = comms && devs ? MB_OK : mb_errf(err, MB_ESYS, "out of memory");
        for (int i = 0; rc == MB_OK && i < s->ndev; i++)
            devs[i] = s->dev[i].device;
        if (rc == MB_OK)
            rc = nccl_err(ncclCommInitAll(comms, s->ndev, devs), NULL, err, "ncclCommInitAll");
        for (int i = 0; rc == MB_OK && i < s->ndev; i++)
            s->dev[i].comm = comms[i];
        free(comms);
        free(devs);
        return rc;
    }
#ifdef MB_HAVE_MPI
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int rc = MB_OK;
    if (mb_dist_rank() == 0)
        rc = nccl_err(ncclGetUniqueId(&id), NULL, err, "ncclGetUniqueId");
    rc = mb_dist_agree_err(rc, err); /* rank 0 failing must not leave the others in MPI_Bcast */
    if (rc == MB_OK)
        rc = mb_mpi_err(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, mb_dist_comm()), err,
                        "MPI_Bcast(ncclUniqueId)");
    if (rc == MB_OK)
        rc = mb_cuda_err(cudaSetDevice(s->dev[0].device), err, "cudaSetDevice");
    if (rc == MB_OK)
        rc = nccl_err(ncclCommInitRank(&s->dev[0].comm, mb_dist_size(), id, mb_dist_rank()), NULL, err,
                      "ncclCommInitRank");
    return rc;
#else
    return mb_errf(err, MB_ESKIP, "topology=mpi: built without MPI");
#endif
}

/* Active NVLink links of a GPU, from NVML (the driver's library, loaded at
 * run time as kernels/gpu/helpers/gpu_context.c does, and declared by hand for the same
 * reason: the toolkit has no nvml.h). NVML sees every link of the device
 * whatever CUDA_VISIBLE_DEVICES hides, so a rank given one GPU (srun
 * --gpus-per-task=1) still finds its NVLinks. -1 when NVML cannot tell. */
#define NVML_MAX_LINKS 18 /* NVML_NVLINK_MAX_LINKS since Hopper (12 before) */
static int nvlink_links(int device)
{
    char bus[32];
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess)
        return -1;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        return -1;
    int (*init)(void), (*shutdown)(void), (*by_bus)(const char *, void **);
    int (*state)(void *, unsigned, int *); /* nvmlDevice_t, link, nvmlEnableState_t* */
    *(void **)&init = dlsym(lib, "nvmlInit_v2");
    *(void **)&shutdown = dlsym(lib, "nvmlShutdown");
    *(void **)&by_bus = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&state = dlsym(lib, "nvmlDeviceGetNvLinkState");
    int active = -1;
    void *h = NULL;
    if (init && shutdown && by_bus && state && init() == 0) { /* NVML_SUCCESS = 0 */
        if (by_bus(bus, &h) == 0) {
            active = 0;
            /* Links past the device's count answer NVML_ERROR_INVALID_ARGUMENT,
             * a GPU without NVLink NVML_ERROR_NOT_SUPPORTED: both count 0. */
            for (unsigned link = 0; link < NVML_MAX_LINKS; link++) {
                int on = 0;
                if (state(h, link, &on) == 0 && on == 1) /* NVML_FEATURE_ENABLED */
                    active++;
            }
        }
        shutdown(); /* init is reference counted: gpu_context's stays */
    }
    dlclose(lib);
    return active;
}

/* Without NVML: does the GPU reach a peer with native atomics (NVLink gives
 * them; most PCIe peer links do not, though PCIe AtomicOps can)? 1 yes, 0 no,
 * -1 cannot tell (one GPU visible). */
static int nvlink_peer(int device, int *peer_out)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2)
        return -1;
    for (int peer = 0; peer < count; peer++) {
        int atomics = 0;
        if (peer != device &&
            cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, device, peer) ==
                cudaSuccess &&
            atomics) {
            *peer_out = peer;
            return 1;
        }
    }
    return 0;
}

/* PCIe rate of the GPU's link (one direction, GB/s), from sysfs (pcie.h). */
static double pcie_of(int device, char *text, size_t len)
{
    char bus[32], norm[32], what[48];
    mb_pcie_link link;
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess ||
        mb_pcie_normalize_busid(bus, norm, sizeof norm, NULL) != MB_OK ||
        mb_pcie_read(mb_sysfs_root(), norm, &link, NULL) != MB_OK)
        return 0;
    double gbps = mb_pcie_link_gbps(&link, 0);
    snprintf(text, len, "%s of GPU %s (maximum link, one direction)",
             mb_pcie_describe(link.max_gen, link.max_width, what, sizeof what), norm);
    return gbps;
}

static void find_peak(coll_nccl *s)
{
    int device = s->dev[0].device, peer = -1;
    struct cudaDeviceProp prop;
    double intra = 0;
    char intra_src[256] = "";
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
        prop.name[0] = '\0';
    int links = nvlink_links(device), has_nvlink = links >= 0 ? links > 0 : nvlink_peer(device, &peer);
    if (has_nvlink < 0) {
        snprintf(s->link, sizeof s->link, "GPU %d: no NVML and no second GPU visible: link unknown", device);
    } else if (has_nvlink) {
        mb_datasheet *ds = NULL;
        double nvlink = 0;
        const char *src = NULL;
        if (mb_datasheet_match(prop.name, &ds, NULL) == MB_OK &&
            mb_datasheet_get(ds, "interconnect.nvlink_gbps", &nvlink, &src) && nvlink > 0) {
            intra = nvlink / 2; /* the datasheet counts both directions */
            snprintf(intra_src, sizeof intra_src, "NVLink %.0f GB/s each way (%s: %.0f GB/s both ways; %s)",
                     intra, mb_datasheet_name(ds), nvlink, src ? src : "datasheet");
        }
        const char *no_peak = intra > 0 ? "" : " (no datasheet entry with nvlink_gbps: no peak)";
        if (links > 0)
            snprintf(s->link, sizeof s->link, "GPU %d: %d active NVLink links (NVML)%s", device, links, no_peak);
        else
            snprintf(s->link, sizeof s->link, "GPU %d reaches GPU %d with native peer atomics: NVLink%s "
                     "(no NVML; PCIe AtomicOps would look the same)", device, peer, no_peak);
        mb_datasheet_free(ds);
    } else {
        intra = pcie_of(device, intra_src, sizeof intra_src);
        snprintf(s->link, sizeof s->link, links == 0 ? "GPU %d: no active NVLink (NVML): PCIe"
                                                     : "no NVLink peer seen from GPU %d: PCIe", device);
    }
    s->peak = intra;
    snprintf(s->peak_source, sizeof s->peak_source, "%s", intra_src);
    if (mb_dist_nodes() > 1) {
        char names[200];
        double nic = mb_nic_gbps(names, sizeof names);
        mb_dist_min_double(&nic, NULL);
        if (nic > 0 && (s->peak <= 0 || nic < s->peak)) {
            s->peak = nic;
            snprintf(s->peak_source, sizeof s->peak_source,
                     "network between %d nodes: sum of the up links of the slowest node "
                     "(/sys/class/net; here %s)", mb_dist_nodes(), names);
        } else if (nic <= 0) {
            s->peak = 0;
            snprintf(s->note, sizeof s->note, "%d nodes, but some node reports no network link speed: "
                     "no peak", mb_dist_nodes());
        }
    }
    if (s->peak <= 0 && s->note[0] == '\0')
        snprintf(s->note, sizeof s->note, "no link rate found for GPU %d: no peak", device);
}

static int coll_nccl_setup(mb_collective coll, const mb_params *p, void **state, mb_err *err)
{
    *state = NULL;
    coll_nccl *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    s->inplace = mb_param_bool(p, "inplace");
    s->batch = (int)mb_param_int(p, "batch");
    /* Decided from the parameters and the world size alone, so every rank
     * agrees below as many times as every other, whatever fails where. */
    bool mpi = false;
    use_mpi(p, &mpi, NULL);
    int rc = setup_local(s, coll, p, err);
    if (mpi)
        rc = mb_dist_agree_err(rc, err);
    if (rc == MB_OK)
        rc = init_comms(s, err);
    if (mpi)
        rc = mb_dist_agree_err(rc, err);
    for (long long i = 0; rc == MB_OK && i < mb_param_int(p, "warmup"); i++)
        rc = launch_all(s, err);
    if (rc == MB_OK)
        rc = sync_all(s, err);
    if (mpi)
        rc = mb_dist_agree_err(rc, err);
    if (rc == MB_OK)
        find_peak(s);
    if (rc != MB_OK) {
        coll_nccl_teardown(s);
        return rc;
    }
    *state = s;
    return MB_OK;
}

static int coll_nccl_run(void *state, double *seconds, mb_err *err)
{
    coll_nccl *s = state;
    int rc = s->pending.code != MB_OK ? mb_errf(err, s->pending.code, "%s", s->pending.msg) : MB_OK;
    /* The ranks agree before the collective (a rank that cannot take part
     * stops all instead of leaving them in NCCL until the deadline) and after
     * it (before the maximum of the times, which every rank must reach). */
    if (s->mpi)
        rc = mb_dist_agree_err(rc, err);
    if (rc == MB_OK)
        rc = barrier(s, err);
    for (int i = 0; rc == MB_OK && i < s->ndev; i++)
        if (mb_cuda_err(cudaSetDevice(s->dev[i].device), err, "cudaSetDevice") != MB_OK ||
            mb_cuda_err(cudaEventRecord(s->dev[i].start, s->dev[i].stream), err, "cudaEventRecord") != MB_OK)
            rc = err->code;
    for (int b = 0; rc == MB_OK && b < s->batch; b++)
        rc = launch_all(s, err);
    if (rc == MB_OK)
        rc = sync_all(s, err);
    double slowest = 0;
    for (int i = 0; rc == MB_OK && i < s->ndev; i++) {
        float ms = 0;
        if (mb_cuda_err(cudaSetDevice(s->dev[i].device), err, "cudaSetDevice") != MB_OK ||
            mb_cuda_err(cudaEventElapsedTime(&ms, s->dev[i].start, s->dev[i].stop), err,
                        "cudaEventElapsedTime") != MB_OK)
            rc = err->code;
        else if (ms / 1e3 > slowest)
            slowest = ms / 1e3;
    }
    if (s->mpi) {
        rc = mb_dist_agree_err(rc, err);
        if (rc == MB_OK) /* the slowest rank's time is the collective's */
            rc = mb_dist_max_double(&slowest, err);
    }
    if (rc != MB_OK)
        return rc;
    *seconds = slowest;
    return mb_coll_samples_add(&s->samples, slowest, err);
}

/* After the runner's warm-up: its times leave the samples, and out of place
 * the outputs are poisoned again, so verify() sees what the timed
 * iterations wrote, not a result left by the warm-up. Untimed. An error
 * comes back from the next run(). */
static void coll_nccl_timing_start(void *state)
{
    coll_nccl *s = state;
    mb_coll_samples_free(&s->samples);
    s->collectives = 0;
    for (int i = 0; !s->inplace && s->pending.code == MB_OK && i < s->ndev; i++) {
        nccl_dev *d = &s->dev[i];
        if (mb_cuda_err(cudaSetDevice(d->device), &s->pending, "cudaSetDevice") == MB_OK &&
            stage_poison(s, d->recv, s->shape.out_elems, &s->pending) == MB_OK)
            mb_cuda_err(cudaDeviceSynchronize(), &s->pending, "cudaDeviceSynchronize");
    }
}

static double coll_nccl_work(void *state)
{
    coll_nccl *s = state;
    return s->shape.bytes * mb_coll_work_factor(s->shape.coll, s->shape.nranks) * s->batch;
}

static int coll_nccl_verify(void *state, mb_err *err)
{
    coll_nccl *s = state;
    int rc = MB_OK;
    /* In place the timed iterations reduced their own results: start again
     * from the known inputs. Out of place, check what the last timed
     * iteration left (timing_start poisoned the outputs before the first). */
    if (s->inplace || s->collectives == 0) {
        rc = fill_all(s, err);
        int brc = barrier(s, err); /* every rank, whatever its fill did */
        rc = rc == MB_OK ? brc : rc;
        if (s->mpi) /* all ranks launch or none */
            rc = mb_dist_agree_err(rc, err);
        if (rc == MB_OK)
            rc = launch_all(s, err);
        if (rc == MB_OK)
            rc = sync_all(s, err);
    }
    for (int i = 0; rc == MB_OK && i < s->ndev; i++)
        rc = check_device(s, &s->dev[i], err);
    return s->mpi ? mb_dist_agree_err(rc, err) : rc;
}

static void coll_nccl_report(void *state, mb_report *r)
{
    coll_nccl *s = state;
    char text[64];
    mb_coll_report_common(r, &s->shape, &s->samples, s->batch, s->inplace);
    mb_nccl_version_text(nccl_runtime_version(), text, sizeof text);
    mb_report_info(r, "nccl", text); /* the library that ran, not the headers */
    if (nccl_runtime_version() != NCCL_VERSION_CODE)
        mb_report_note(r, "NCCL %s loaded at run time; built with the headers of %d.%d.%d", text, NCCL_MAJOR,
                       NCCL_MINOR, NCCL_PATCH);
    mb_report_info(r, "topology", s->mpi ? "mpi: one rank per GPU" : "local: one process, every GPU");
    mb_report_info(r, "link", s->link);
    if (s->shape.nranks == 1)
        mb_report_note(r, "one GPU (gpus = 1): a smoke test of the NCCL path, not a ceiling; a one-rank "
                          "collective is a local copy (broadcast: the copy rate)");
    else if (s->peak > 0)
        mb_report_peak(r, s->peak, s->peak_source);
    if (s->note[0])
        mb_report_note(r, "%s", s->note);
}

static int setup_allreduce(const mb_params *p, void **st, mb_err *e) { return coll_nccl_setup(MB_COLL_ALLREDUCE, p, st, e); }
static int setup_allgather(const mb_params *p, void **st, mb_err *e) { return coll_nccl_setup(MB_COLL_ALLGATHER, p, st, e); }
static int setup_reducescatter(const mb_params *p, void **st, mb_err *e) { return coll_nccl_setup(MB_COLL_REDUCESCATTER, p, st, e); }
static int setup_broadcast(const mb_params *p, void **st, mb_err *e) { return coll_nccl_setup(MB_COLL_BROADCAST, p, st, e); }

const mb_backend_code mb_allreduce_nccl = MB_COLL_CODE("allreduce", "nccl", coll_nccl, setup_allreduce);
const mb_backend_code mb_allgather_nccl = MB_COLL_CODE("allgather", "nccl", coll_nccl, setup_allgather);
const mb_backend_code mb_reducescatter_nccl = MB_COLL_CODE("reducescatter", "nccl", coll_nccl, setup_reducescatter);
const mb_backend_code mb_broadcast_nccl = MB_COLL_CODE("broadcast", "nccl", coll_nccl, setup_broadcast);

#else /* no NCCL or no CUDA */

#ifdef MB_HAVE_CUDA
#define MB_NCCL_WHY "NCCL (libnccl, nccl.h) not found at build time"
#else
#define MB_NCCL_WHY "CUDA not found at build time"
#endif
MB_NOT_BUILT_IN(mb_allreduce_nccl, "allreduce", "nccl", MB_NCCL_WHY);
MB_NOT_BUILT_IN(mb_allgather_nccl, "allgather", "nccl", MB_NCCL_WHY);
MB_NOT_BUILT_IN(mb_reducescatter_nccl, "reducescatter", "nccl", MB_NCCL_WHY);
MB_NOT_BUILT_IN(mb_broadcast_nccl, "broadcast", "nccl", MB_NCCL_WHY);

#endif
