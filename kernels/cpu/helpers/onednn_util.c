/* onednn_util.c: see onednn_util.h. */
#include "onednn_util.h"

#ifdef MB_HAVE_DNNL
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* oneDNN's runtime here is OpenMP. Looked up at run time: libdnnl brings
 * libgomp into the process, and linking OpenMP into mlbench itself only for
 * two calls is not worth it. */
typedef int (*omp_get_fn)(void);
typedef void (*omp_set_fn)(int);
static int default_threads;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void read_default_threads(void)
{
    omp_get_fn get = (omp_get_fn)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    default_threads = get ? get() : 0;
}

int mb_onednn_set_threads(int n)
{
    omp_set_fn set = (omp_set_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    omp_get_fn get = (omp_get_fn)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    if (set != NULL && n > 0)
        set(n);
    return get ? get() : 0;
}

void mb_onednn_restore_threads(void)
{
    pthread_once(&default_once, read_default_threads);
    mb_onednn_set_threads(default_threads);
}

int mb_onednn_resolve_threads(const mb_params *p, mb_err *err)
{
    pthread_once(&default_once, read_default_threads);
    int want = (int)mb_param_int(p, "threads");
    int threads = mb_cpu_threads_for(want, default_threads, err);
    if (threads < 0 || want == 0)
        return threads;
    /* What OpenBLAS does not need: oneDNN sets its count through OpenMP. */
    if (dlsym(RTLD_DEFAULT, "omp_set_num_threads") == NULL) {
        mb_errf(err, MB_ESKIP, "threads=%d: oneDNN's OpenMP runtime not found in the process",
                want);
        return -1;
    }
    return want;
}

int mb_onednn_fail(mb_err *err, dnnl_status_t s, const char *what)
{
    int code = s == dnnl_unimplemented ? MB_ESKIP : MB_EFAIL;
    return mb_errf(err, code, "oneDNN %s: %s", what, dnnl_status2str(s));
}

int mb_onednn_run_timed(dnnl_primitive_t prim, dnnl_stream_t stream, dnnl_memory_t src, dnnl_memory_t wei,
                        dnnl_memory_t dst, const char *what, double *seconds, mb_err *err)
{
    int rc = MB_OK;
    dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, wei }, { DNNL_ARG_DST, dst } };
    double t0 = mb_now();
    DNNL_TRY(dnnl_primitive_execute(prim, stream, 3, args), what);
    DNNL_TRY(dnnl_stream_wait(stream), "stream wait");
    *seconds = mb_now() - t0;
fail:
    return rc;
}

bool mb_onednn_isa_has_bf16(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) ==
           (unsigned)dnnl_cpu_isa_avx512_core_bf16;
}

void mb_onednn_report(mb_report *r, mb_cpu_dtype dtype)
{
    const char *isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
    mb_report_info(r, "onednn_isa", isa);
    const dnnl_version_t *v = dnnl_version();
    char ver[64];
    snprintf(ver, sizeof ver, "%d.%d.%d", v->major, v->minor, v->patch);
    mb_report_info(r, "onednn_version", ver);
    const char *var = getenv("ONEDNN_MAX_CPU_ISA") ? "ONEDNN_MAX_CPU_ISA" : "DNNL_MAX_CPU_ISA";
    mb_cpu_isa used;
    char note[512];
    if (mb_cpu_onednn_isa(isa, &used) &&
        mb_cpu_cap_note(mb_cpu_info_host(), "oneDNN", isa, used, var, getenv(var), dtype, note,
                        sizeof note))
        mb_report_note(r, "%s", note);
}
#endif
