/* onednn_util.h: what the oneDNN backends (conv_onednn.c, gemm_onednn.c)
 * share: the OpenMP thread count oneDNN runs with, status codes as mlbench
 * errors, and the report lines about oneDNN itself (version, ISA, a note when
 * the ISA is capped below the CPU's). */
#ifndef MB_ONEDNN_UTIL_H
#define MB_ONEDNN_UTIL_H

#include "component.h"
#include "cpu_info.h"

#ifdef MB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

/* The `threads` parameter resolved: 0 -> oneDNN's default (OMP_NUM_THREADS
 * or every CPU, read before any case changed it); -1 with MB_ESKIP in err
 * when more than the process may use or OpenMP is not in the process. */
int mb_onednn_resolve_threads(const mb_params *p, mb_err *err);
/* Sets OpenMP's thread count (n > 0) and returns the count in force. Call
 * before creating a primitive: oneDNN partitions work by the count it sees
 * then. */
int mb_onednn_set_threads(int n);
/* Back to the default, for the next case. */
void mb_onednn_restore_threads(void);

/* MB_ESKIP for dnnl_unimplemented (no implementation for this shape, type
 * or ISA), MB_EFAIL otherwise, with oneDNN's status text. */
int mb_onednn_fail(mb_err *err, dnnl_status_t s, const char *what);

/* In a function with `int rc`, `mb_err *err` and a `fail:` label: a oneDNN
 * call whose failure becomes rc (mb_onednn_fail) and a jump to fail. */
#define DNNL_TRY(call, what)                     \
    do {                                         \
        dnnl_status_t s_ = (call);               \
        if (s_ != dnnl_success) {                \
            rc = mb_onednn_fail(err, s_, what);  \
            goto fail;                           \
        }                                        \
    } while (0)

/* One timed run of a primitive over src, weights and dst (what every
 * oneDNN backend times): execute, wait for the stream, the seconds between. */
int mb_onednn_run_timed(dnnl_primitive_t prim, dnnl_stream_t stream, dnnl_memory_t src, dnnl_memory_t wei,
                        dnnl_memory_t dst, const char *what, double *seconds, mb_err *err);

/* True when oneDNN's effective ISA includes native bf16 dot products. */
bool mb_onednn_isa_has_bf16(void);

/* onednn_isa, onednn_version and, when the ISA oneDNN uses is below the
 * CPU's (DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA, or its own dispatch), a
 * note with the capped peak fraction for `dtype`. */
void mb_onednn_report(mb_report *r, mb_cpu_dtype dtype);
#endif

#endif
