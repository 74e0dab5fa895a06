/* component.h: the one interface between the harness and a component backend.
 *
 * Modelled on fio's struct ioengine_ops. Every backend is one file in kernels/
 * exporting its code (`const mb_backend_code mb_<component>_<backend>`); its
 * description lives in the core library (see "description and code" below);
 * harness/registry.c composes the two into the mb_component_ops the harness
 * knows components through.
 *
 * Life of a case (harness/runner.c):
 *   probe(params)            -> MB_ESKIP + reason: the case is "skipped"
 *   setup(params, &state)    -> MB_ESKIP (dtype missing, does not fit) or error
 *   run(state, &seconds) x N -> warm-up first, then Google Benchmark iterations
 *   verify(state)            -> MB_EVERIFY: the case is "failed"
 *   report(state, r)         -> extra metrics, info strings, peak, notes
 *   teardown(state)          -> always, also after errors
 *
 * The runner keeps to it (tests/test_core.c checks every path): no setup after
 * a probe that skips or fails, hence no teardown; otherwise exactly one
 * teardown per setup, a failed one included, with whatever setup stored in
 * *state (NULL when it stored nothing); report() sees the live state, before
 * teardown. A run() time that is not positive and finite, or work per
 * iteration that is not, fails the case with the reason.
 *
 * Timing: run() performs one iteration and stores in *seconds the duration of
 * its timed region only (host: CLOCK_MONOTONIC via mb_now(); device: CUDA
 * events on the benchmark's stream). Anything that must not be timed (dropping
 * the page cache, re-mapping a file) happens inside run() outside that region.
 * Google Benchmark always runs in manual-time mode with these seconds.
 *
 * Kernels never print and never format: they return numbers and errors.
 */
#ifndef MB_COMPONENT_H
#define MB_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mb.h"

/* ---- parameters ---------------------------------------------------------- */

typedef enum mb_param_type {
    MB_P_INT,    /* integer, decimal */
    MB_P_SIZE,   /* byte count: 4096, 4k, 64K, 1m, 1g, 1t (binary units) */
    MB_P_DOUBLE, /* floating point */
    MB_P_STRING, /* free text */
    MB_P_ENUM,   /* one of `choices`, written "a|b|c" */
    MB_P_BOOL,   /* 0/1, true/false, yes/no, on/off */
} mb_param_type;

typedef struct mb_param_spec {
    const char *name;
    mb_param_type type;
    const char *def;     /* default as text; NULL = required */
    const char *choices; /* MB_P_ENUM: "a|b|c" */
    double min, max;     /* numeric bounds, inclusive; ignored when min > max */
    const char *help;
} mb_param_spec;

/* Terminates a spec array. */
#define MB_PARAM_END { NULL, MB_P_STRING, NULL, NULL, 0, 0, NULL }

/* The resolved parameters of one case (defaults + job file values), already
 * validated against the spec by the harness: accessors cannot fail for a name
 * in the component's spec. Asking for an unknown name is a programming error
 * (it asserts in debug builds and returns 0/""/false). */
typedef struct mb_params mb_params;

long long mb_param_int(const mb_params *p, const char *name); /* INT and SIZE */
double mb_param_double(const mb_params *p, const char *name);
const char *mb_param_str(const mb_params *p, const char *name); /* any type, as text */
bool mb_param_bool(const mb_params *p, const char *name);
/* True when the job file set it (false when the default is in force). */
bool mb_param_is_set(const mb_params *p, const char *name);

/* ---- what a case reports beyond its rate ---------------------------------- */

typedef struct mb_report mb_report;

/* A named number with a unit, e.g. ("latency_p99", 87.1, "us"). */
void mb_report_metric(mb_report *r, const char *name, double value, const char *unit);
/* A named string, e.g. ("algorithm", "cublasLt algo 23 tile 256x128"). */
void mb_report_info(mb_report *r, const char *name, const char *value);
/* A free-text remark shown with the case, e.g. "io_uring not permitted: used pread". */
void mb_report_note(mb_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The hardware's theoretical rate for this case, in the component's rate unit
 * (e.g. GB/s), and where the figure comes from ("datasheet: H100 SXM bf16
 * dense", "PCIe 5.0 x16, 128b/130b"). The harness derives efficiency. */
void mb_report_peak(mb_report *r, double rate, const char *source);

/* ---- the ops table --------------------------------------------------------- */

typedef struct mb_component_ops {
    const char *component; /* "disk", "hostmem", "gemm", ... (suite `component =`) */
    const char *backend;   /* "pread", "io_uring", "cublaslt", ...  */
    const char *summary;   /* one line for `mlbench list` */

    /* Work per iteration is counted in work_unit ("byte", "flop", "io",
     * "launch", "op"). Rate = work / seconds / rate_scale, in rate_unit
     * (e.g. "GB/s" with scale 1e9, "TFLOP/s" with 1e12). */
    const char *work_unit;
    const char *rate_unit;
    double rate_scale;
    /* True for latency-type components (launch, sync): tables lead with the
     * time per unit of work (us) instead of the rate. */
    bool latency_first;

    const mb_param_spec *params; /* terminated by MB_PARAM_END */

    /* Can this case run here? MB_OK, or MB_ESKIP with the reason in why (the
     * CUDA error text, "not built in: cuDNN not found at build time", ...).
     * params is NULL when `mlbench list` asks about the backend in general.
     * Must be cheap and must not leave state behind. */
    int (*probe)(const mb_params *params, mb_err *why);

    int (*setup)(const mb_params *params, void **state, mb_err *err);
    int (*run)(void *state, double *seconds, mb_err *err);
    /* Work done by one run() call, in work_unit. */
    double (*work_per_iter)(void *state);
    /* Checks the output of the iterations run so far. MB_OK, MB_EVERIFY with
     * what differed, or MB_ESKIP when no check is possible (then it says why). */
    int (*verify)(void *state, mb_err *err);
    void (*report)(void *state, mb_report *r); /* optional (NULL) */
    /* Optional: called once after the warm-up, before the first timed
     * iteration, so a component that keeps per-operation samples (latency
     * percentiles) can drop the warm-up's. */
    void (*timing_start)(void *state);
    void (*teardown)(void *state);             /* must accept NULL */

    /* Collective components (all-reduce under MPI) need the same iteration
     * count on every rank: the runner then uses fixed iterations instead of
     * Google Benchmark's adaptive count. */
    bool collective;
    /* Runs on a GPU: the runner samples GPU clocks/temperature/power (NVML)
     * before and after the case. */
    bool uses_gpu;
    /* A compute ceiling (GEMM, conv, peak): after its repetitions the runner
     * also measures the burst and sustained phases (harness/api/phases.h), whose
     * rates differ once a power cap holds the clocks down. */
    bool compute;
    /* The real code is not available (library not built in or not
     * loadable): the suite loader then accepts any key for it, so suites
     * still load and the case is skipped with the probe's reason (params
     * still lists the described parameters). */
    bool params_unknown;
} mb_component_ops;

/* The explicit registry (harness/registry.c): the built-in tables, then the
 * GPU modules' (loaded on first call; see harness/modules.c). */
size_t mb_registry_count(void);
const mb_component_ops *mb_registry_at(size_t i);
/* backend NULL: the component's first backend. */
const mb_component_ops *mb_registry_find(const char *component, const char *backend);
/* The same among the built-in tables only: loads no GPU module (for the
 * analysis, which must not map the GPU libraries for a disk case). */
const mb_component_ops *mb_registry_find_builtin(const char *component, const char *backend);

/* ---- description and code -------------------------------------------------
 *
 * mb_component_ops above is what the harness sees. It is composed
 * (harness/backends.c) from two halves kept apart so each fact has one home:
 *  - the static description (what `mlbench list`, suites and results need:
 *    names, units, scale, flags, parameters), kept once per backend in the
 *    core library (kernels/<folder>/descriptions.c, and
 *    kernels/shared/gpu_descriptions.c for the GPU modules' backends), so a
 *    module that cannot load still lists its backends with their real
 *    parameters;
 *  - the code (probe/setup/run/...), in the backend file: in the core
 *    library, or in a GPU module that exports its code tables (module_*.c).
 * The two are joined by component and backend; a description without code,
 * code without a description or code missing a required function is an
 * error the loader reports (and test_backends checks). */

typedef struct mb_backend_desc {
    const char *component, *backend, *summary;
    const char *work_unit, *rate_unit;
    double rate_scale;
    bool latency_first;
    const mb_param_spec *params; /* terminated by MB_PARAM_END */
    bool collective, uses_gpu, compute;
} mb_backend_desc;

/* A description's names, units, parameters and `mlbench list` line, in the
 * order a table of them reads; flags follow in the braces:
 *   { MB_DESCRIBE("gemm", "cublas", "flop", "TFLOP/s", 1e12, params, "..."), .compute = true }, */
#define MB_DESCRIBE(comp, back, unit, rateunit, scale, param_list, summary_text)                     \
    .component = comp, .backend = back, .work_unit = unit, .rate_unit = rateunit, .rate_scale = scale, \
    .params = param_list, .summary = summary_text

/* Terminates a description list. */
#define MB_BACKEND_DESC_END { NULL, NULL, NULL, NULL, NULL, 0, false, NULL, false, false, false }

/* The version of this contract between the harness and a backend built apart
 * from it (the GPU modules, loaded with dlopen): raised whenever
 * mb_backend_code, mb_component_ops or what they promise changes. A module
 * exports it as `const int mb_module_<name>_abi` (MB_MODULE_ABI(name) below:
 * one name per module, as two modules loaded in one process, or linked into
 * one test, must not define the same global); the loader refuses a module
 * built for another one, with the reason (fio's ioengine version is the model). */
#define MB_COMPONENT_ABI 1
#define MB_MODULE_ABI(name) const int mb_module_##name##_abi = MB_COMPONENT_ABI

typedef struct mb_backend_code {
    const char *component, *backend; /* the description this code implements */
    int (*probe)(const mb_params *params, mb_err *why);
    int (*setup)(const mb_params *params, void **state, mb_err *err);
    int (*run)(void *state, double *seconds, mb_err *err);
    double (*work_per_iter)(void *state);
    int (*verify)(void *state, mb_err *err);
    void (*report)(void *state, mb_report *r); /* optional */
    void (*timing_start)(void *state);         /* optional */
    void (*teardown)(void *state);
    /* Not NULL: a placeholder for a backend whose library was not found at
     * build time (MB_NOT_BUILT_IN): only probe is set, and this is the
     * summary `mlbench list` shows. */
    const char *unavailable;
} mb_backend_code;

/* The code of a backend whose library was not found at build time: it lists
 * (with its description) and every probe says why it cannot run. */
#define MB_NOT_BUILT_IN(sym, comp, back, why_text)                                \
    static int sym##_probe(const mb_params *p, mb_err *why)                       \
    {                                                                             \
        (void)p;                                                                  \
        return mb_errf(why, MB_ESKIP, "not built in: %s", why_text);              \
    }                                                                             \
    const mb_backend_code sym = {                                                 \
        .component = comp, .backend = back, .probe = sym##_probe,                 \
        .unavailable = "not built in: " why_text,                                 \
    }

/* ---- small helpers every kernel may use ------------------------------------ */

/* Monotonic wall clock in seconds (CLOCK_MONOTONIC). */
double mb_now(void);

/* Fast, seedable PRNG (splitmix64) for random inputs: never zeros. */
static inline uint64_t mb_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform double in [-1, 1). */
static inline double mb_rand_unit(uint64_t *state)
{
    return (double)(mb_splitmix64(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Parses a size ("4k", "1m", "64K", "1g", plain bytes); MB_EUSAGE on junk. */
int mb_parse_size(const char *text, long long *out, mb_err *err);

#endif
