/* gpu_gate.h: a spin kernel that holds a stream while the host enqueues the
 * work to be timed (nvbandwidth's method).
 *
 *   mb_cuda_gate_close(g, s)   spin kernel on s: s stops here
 *   mb_cuda_timer_start(...)   start event, behind the spin
 *   ... enqueue N copies / a kernel ...
 *   mb_cuda_timer_record_stop(...)
 *   mb_cuda_gate_open(g)       the host releases the spin: the work runs
 *                              back to back, with no enqueue gaps between
 *                              the events
 *   mb_cuda_timer_elapsed(...)
 *
 * Every path that closed the gate must open it (also on errors), or the
 * stream waits for the spin's timeout. Compiled only with CUDA. */
#ifndef MB_GPU_GATE_H
#define MB_GPU_GATE_H

#ifdef MB_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <stdbool.h>

#include "gpu_util.h"
#include "mb.h"

/* A spin that outlives this was not released: a bug, a host descheduled
 * that long, or a driver queue that filled up so the host blocked while
 * enqueueing behind it. It then gives up so the stream is not held forever,
 * and says so (mb_cuda_gate_timed_out). Enqueueing a timed region takes
 * milliseconds; nvbandwidth waits 10 s, 2 s keeps a stuck run short. */
#define MB_GATE_TIMEOUT_NS 2000000000ull

typedef struct mb_cuda_gate {
    volatile int *host; /* host-mapped pinned: [0] release flag, [1] timed out */
    int *dev;           /* the same two ints as the device addresses them */
    bool closed;
    unsigned timeouts;  /* spins that ran into the timeout so far */
} mb_cuda_gate;

int mb_cuda_gate_init(mb_cuda_gate *g, mb_err *err);
int mb_cuda_gate_close(mb_cuda_gate *g, cudaStream_t stream, mb_err *err);
void mb_cuda_gate_open(mb_cuda_gate *g);
/* After the stream passed the spin (e.g. the stop event completed): true when
 * that spin hit its timeout, i.e. enqueue time may be inside the events. */
bool mb_cuda_gate_timed_out(mb_cuda_gate *g);
void mb_cuda_gate_destroy(mb_cuda_gate *g);

/* The whole sequence above for one kernel: close the gate, start event,
 * launch(ctx) on the stream, stop event, open the gate, elapsed seconds.
 * On an error the gate is opened and the stream drained, and the first
 * error is returned (`what` names the launch in its message). */
typedef cudaError_t (*mb_cuda_launch_fn)(void *ctx);
int mb_cuda_gate_time(mb_cuda_gate *g, mb_cuda_timer *t, cudaStream_t stream, mb_cuda_launch_fn launch,
                      void *ctx, const char *what, double *seconds, mb_err *err);

#endif /* MB_HAVE_CUDA */
#endif
