/* gpu_gate.c: the spin-kernel gate (see gpu_gate.h). */
#include "gpu_gate.h"

#include <string.h>

#include "gpu_kernels.h"
#include "gpu_util.h"

int mb_cuda_gate_init(mb_cuda_gate *g, mb_err *err)
{
    memset(g, 0, sizeof *g);
    int rc = mb_cuda_err(mb_gpu_preload(), err, "loading the benchmark kernels");
    if (rc != MB_OK)
        return rc;
    void *p = NULL;
    /* Mapped: the spin kernel reads the flag over the bus each time round, so
     * it sees the host's store without any copy being enqueued (a copy would
     * queue behind the spin itself). */
    rc = mb_cuda_err(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable), err,
                     "cudaHostAlloc(spin flag)");
    if (rc != MB_OK)
        return rc;
    g->host = p;
    g->host[0] = 1;
    g->host[1] = 0;
    void *d = NULL;
    rc = mb_cuda_err(cudaHostGetDevicePointer(&d, p, 0), err, "cudaHostGetDevicePointer(spin flag)");
    if (rc != MB_OK) {
        mb_cuda_gate_destroy(g);
        return rc;
    }
    g->dev = d;
    return MB_OK;
}

int mb_cuda_gate_close(mb_cuda_gate *g, cudaStream_t stream, mb_err *err)
{
    if (g->host == NULL)
        return mb_errf(err, MB_EFAIL, "spin gate used before mb_cuda_gate_init succeeded");
    __atomic_store_n(&g->host[0], 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&g->host[1], 0, __ATOMIC_SEQ_CST);
    int rc = mb_cuda_err(mb_gpu_spin(g->dev, g->dev + 1, MB_GATE_TIMEOUT_NS, stream), err,
                         "spin kernel launch");
    g->closed = rc == MB_OK;
    return rc;
}

void mb_cuda_gate_open(mb_cuda_gate *g)
{
    if (g->host)
        __atomic_store_n(&g->host[0], 1, __ATOMIC_SEQ_CST);
    g->closed = false;
}

bool mb_cuda_gate_timed_out(mb_cuda_gate *g)
{
    if (g->host == NULL || __atomic_load_n(&g->host[1], __ATOMIC_SEQ_CST) == 0)
        return false;
    g->timeouts++;
    __atomic_store_n(&g->host[1], 0, __ATOMIC_SEQ_CST);
    return true;
}

void mb_cuda_gate_destroy(mb_cuda_gate *g)
{
    if (g->host) {
        mb_cuda_gate_open(g); /* never leave a spin waiting on freed memory */
        cudaDeviceSynchronize();
        cudaFreeHost((void *)g->host);
    }
    memset(g, 0, sizeof *g);
}

int mb_cuda_gate_time(mb_cuda_gate *g, mb_cuda_timer *t, cudaStream_t stream, mb_cuda_launch_fn launch,
                      void *ctx, const char *what, double *seconds, mb_err *err)
{
    int rc = mb_cuda_gate_close(g, stream, err);
    if (rc == MB_OK)
        rc = mb_cuda_timer_start(t, err);
    if (rc == MB_OK)
        rc = mb_cuda_err(launch(ctx), err, what);
    if (rc == MB_OK)
        rc = mb_cuda_timer_record_stop(t, err);
    mb_cuda_gate_open(g);
    if (rc == MB_OK)
        rc = mb_cuda_timer_elapsed(t, seconds, err);
    if (rc != MB_OK) {
        cudaStreamSynchronize(stream);
        return rc;
    }
    mb_cuda_gate_timed_out(g);
    return MB_OK;
}
