/* gemm_cublaslt.c: the GEMM ceiling through cuBLASLt (cublasLtMatmul).
 *
 * Setup asks cuBLASLt's heuristic for up to `algos` algorithms
 * (cublasLtMatmulAlgoGetHeuristic, ranked by its own estimate), times each
 * briefly (outside the timed region) and keeps the fastest: that is the
 * ceiling. The heuristic's first choice, which is what a caller who takes
 * the top answer gets, is reported beside it as a metric. The timed region is
 * `inner` cublasLtMatmul calls back to back on one stream between two CUDA
 * events, with a preallocated workspace and nothing else: no allocation, no
 * synchronisation, no descriptor work.
 *
 * fp8 follows cuBLASLt's rules (docs: cublasLtMatmul, FP8): A and B e4m3 in
 * the TN layout (on Ada, Hopper and Blackwell GeForce: mb_gemm_problem_check),
 * 16-byte aligned columns and pointers, per-tensor scales through
 * CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER (device floats in the default
 * scalar scale mode, each in its own 256-byte slot: a scale 4 bytes after
 * the other made every call fail on the H100), fp32 compute and scale type,
 * C of the same type as D (bf16 or fp16) with beta = 0, no D scale (D is not
 * fp8). int8 uses the regular
 * (column-major) ordering, TN, int32 C/D, CUBLAS_COMPUTE_32I with int32
 * alpha/beta.
 */
#include "component.h"

#ifdef MB_HAVE_CUDA
#include <cublasLt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_common.h"
#ifdef MB_HAVE_CUBLASLT_NAMES
#include "mb_cublaslt_names.h"
#endif

#define LT_MAX_ALGOS MB_GEMM_LT_MAX_ALGOS
#define LT_TUNE_BUDGET_S 5.0 /* seconds of candidate timing in setup, at most */

typedef struct lt_candidate {
    cublasLtMatmulHeuristicResult_t h;
    double seconds; /* per call; 0 when it failed */
    char desc[192];
    char failure[160];
} lt_candidate;

typedef struct lt_state {
    mb_gemm_bench g; /* first: tests reach the common part through it */
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    mb_gemm_scalars scalars;
    bool fast_accum;
    const float *a_scale, *b_scale; /* fp8: device scales, each in its own aligned slot */
    lt_candidate cand[LT_MAX_ALGOS];
    int n_cand;
    int tuned;   /* candidates timed (the budget may stop short of n_cand) */
    int current; /* candidate the call function uses */
    int best;
} lt_state;

#define LT_TRY(call)                                                                               \
    do {                                                                                           \
        rc = mb_cublas_err((int)(call), err, #call);                                               \
        if (rc != MB_OK)                                                                           \
            return rc;                                                                             \
    } while (0)

/* ---- describing the problem to cuBLASLt ------------------------------------------------ */

static int lt_layout(cublasLtMatrixLayout_t *out, cudaDataType_t type, long long rows,
                     long long cols, long long ld, long long batch, long long stride, mb_err *err)
{
    int rc;
    LT_TRY(cublasLtMatrixLayoutCreate(out, type, (uint64_t)rows, (uint64_t)cols, (int64_t)ld));
    if (batch > 1) {
        int32_t count = (int32_t)batch;
        int64_t offset = (int64_t)stride;
        LT_TRY(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                sizeof count));
        LT_TRY(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &offset, sizeof offset));
    }
    return MB_OK;
}

/* cuBLASLt's FP8 pointer contract (gemm_common.h), checked before anything
 * runs: the scales as the descriptor will hold them, A, B and C of every
 * buffer set, and of the second batch entry (the strided-batch offset). */
static int lt_fp8_pointers(const lt_state *s, mb_err *err)
{
    const mb_gemm_bench *g = &s->g;
    const mb_gemm_problem *p = &g->prob;
    size_t batch_a = 0, batch_b = 0, batch_c = 0;
    if (p->batch > 1) {
        batch_a = (size_t)p->stride_a * mb_elem_size(p->a_type);
        batch_b = (size_t)p->stride_b * mb_elem_size(p->b_type);
        batch_c = (size_t)p->stride_c * mb_elem_size(p->c_type);
    }
    for (int set = 0; set < (g->base_a ? g->rotate : 1); set++)
        for (int entry = 0; entry < (p->batch > 1 ? 2 : 1); entry++) {
            mb_gemm_fp8_pointers ptrs = { .a_scale = s->a_scale, .b_scale = s->b_scale };
            if (g->base_a) {
                ptrs.a = (const char *)g->base_a + set * g->set_stride_a + entry * batch_a;
                ptrs.b = (const char *)g->base_b + set * g->set_stride_b + entry * batch_b;
                ptrs.c = (const char *)g->base_c + set * g->set_stride_c + entry * batch_c;
            } else { /* describe-only: no matrices, only the scales to check */
                ptrs.a = ptrs.b = ptrs.c = s->a_scale;
            }
            int rc = mb_gemm_fp8_pointers_check(&ptrs, err);
            if (rc != MB_OK)
                return rc;
        }
    return MB_OK;
}

static int lt_describe(lt_state *s, size_t workspace, mb_err *err)
{
    const mb_gemm_problem *p = &s->g.prob;
    mb_gemm_cuda_types t = mb_gemm_cuda_types_of(p);
    int rc;
    LT_TRY(cublasLtMatmulDescCreate(&s->op, t.compute, t.scale));
    int32_t ta = p->transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    int32_t tb = p->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (p->dtype == MB_GEMM_FP8) {
        rc = lt_fp8_pointers(s, err);
        if (rc != MB_OK)
            return rc;
        const void *a_scale = s->a_scale, *b_scale = s->b_scale;
        int8_t fast = s->fast_accum ? 1 : 0;
        LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                              &a_scale, sizeof a_scale));
        LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                              &b_scale, sizeof b_scale));
        LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                              sizeof fast));
    }
    /* Layouts describe the matrices as stored (before op()); the shapes
     * come from the same pure function the tests check. */
    long long rows, cols, ld;
    mb_gemm_stored_dims(p, 'a', &rows, &cols, &ld);
    rc = lt_layout(&s->la, t.a, rows, cols, ld, p->batch, p->stride_a, err);
    mb_gemm_stored_dims(p, 'b', &rows, &cols, &ld);
    if (rc == MB_OK)
        rc = lt_layout(&s->lb, t.b, rows, cols, ld, p->batch, p->stride_b, err);
    mb_gemm_stored_dims(p, 'c', &rows, &cols, &ld);
    if (rc == MB_OK) /* C and D: same type, same layout (D overwrites C, beta = 0) */
        rc = lt_layout(&s->lc, t.c, rows, cols, ld, p->batch, p->stride_c, err);
    if (rc != MB_OK)
        return rc;
    uint64_t ws = workspace;
    LT_TRY(cublasLtMatmulPreferenceCreate(&s->pref));
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(s->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &ws, sizeof ws));
    mb_gemm_scalars_init(&s->scalars, p);
    return MB_OK;
}

/* ---- algorithms ------------------------------------------------------------------------ */

static const char *lt_name(const void *table, int id)
{
#ifdef MB_HAVE_CUBLASLT_NAMES
    for (const mb_lt_name *n = table; n->name; n++)
        if (n->id == id)
            return n->name;
#else
    (void)table;
    (void)id;
#endif
    return NULL;
}

/* The enumerator's name ("256x128"), or "id N" for one the table lacks. */
static void lt_format_id(char *out, size_t len, const void *table, int id)
{
    const char *name = lt_name(table, id);
    if (name)
        snprintf(out, len, "%s", name);
    else
        snprintf(out, len, "id %d", id);
}

#ifdef MB_HAVE_CUBLASLT_NAMES
#define LT_TILES mb_lt_tiles
#define LT_STAGES mb_lt_stages
#define LT_CLUSTERS mb_lt_clusters
#else
#define LT_TILES NULL
#define LT_STAGES NULL
#define LT_CLUSTERS NULL
#endif

/* "algo 66 tile 256x128 stages 64x3 splitK 1 ..." from the algorithm's
 * configuration attributes. */
static void lt_describe_algo(const cublasLtMatmulAlgo_t *algo, char *out, size_t len)
{
    int32_t id = -1, splitk = 1;
    uint32_t tile = 0, stages = 0, reduction = 0, swizzle = 0, custom = 0;
    uint16_t cluster = 0;
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                         sizeof stages, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                         sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction,
                                         sizeof reduction, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle,
                                         sizeof swizzle, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom,
                                         sizeof custom, &w);
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster,
                                         sizeof cluster, &w);
    char tile_s[32], stages_s[32], cluster_s[32];
    lt_format_id(tile_s, sizeof tile_s, LT_TILES, (int)tile);
    lt_format_id(stages_s, sizeof stages_s, LT_STAGES, (int)stages);
    lt_format_id(cluster_s, sizeof cluster_s, LT_CLUSTERS, (int)cluster);
    snprintf(out, len,
             "algo %d tile %s stages %s splitK %d reduction %u swizzle %u custom %u cluster %s",
             id, tile_s, stages_s, splitk, reduction, swizzle, custom, cluster_s);
}

static int lt_call(void *backend, const void *a, const void *b, void *c, mb_err *err)
{
    lt_state *s = backend;
    const lt_candidate *cand = &s->cand[s->current];
    cublasStatus_t st = cublasLtMatmul(s->handle, s->op, s->scalars.alpha, a, s->la, b, s->lb,
                                       s->scalars.beta, c, s->lc, c, s->lc, &cand->h.algo,
                                       s->g.workspace, s->g.workspace_bytes, s->g.stream);
    return mb_cublas_err((int)st, err, "cublasLtMatmul");
}

static int lt_heuristics(lt_state *s, int wanted, mb_err *err)
{
    cublasLtMatmulHeuristicResult_t results[LT_MAX_ALGOS];
    memset(results, 0, sizeof results);
    int returned = 0;
    if (wanted > LT_MAX_ALGOS)
        wanted = LT_MAX_ALGOS;
    int rc = mb_cublas_err((int)cublasLtMatmulAlgoGetHeuristic(s->handle, s->op, s->la, s->lb,
                                                               s->lc, s->lc, s->pref, wanted,
                                                               results, &returned),
                           err, "cublasLtMatmulAlgoGetHeuristic");
    if (rc != MB_OK)
        return rc;
    for (int i = 0; i < returned; i++) {
        if (results[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        lt_candidate *c = &s->cand[s->n_cand++];
        c->h = results[i];
        lt_describe_algo(&c->h.algo, c->desc, sizeof c->desc);
    }
    if (s->n_cand == 0)
        return mb_errf(err, MB_ESKIP,
                       "cuBLASLt has no algorithm for %s %s %lldx%lldx%lld batch %lld with a %zu "
                       "byte workspace on this GPU",
                       mb_gemm_dtype_name(s->g.prob.dtype), mb_gemm_layout_name(&s->g.prob),
                       s->g.prob.m, s->g.prob.n, s->g.prob.k, s->g.prob.batch,
                       s->g.workspace_bytes);
    return MB_OK;
}

/* Times every candidate for about 10 ms (at least 2 calls, after one
 * untimed call) and picks the fastest. A candidate that fails to launch is
 * recorded and skipped; an error that poisons the context ends setup. */
static int lt_autotune(lt_state *s, mb_err *err)
{
    s->best = -1;
    /* About 50 ms of the first candidate first, so the clocks have ramped
     * up before anything is compared. Its errors show up again below. */
    mb_err ignored = { 0 };
    double one = 0, unused = 0;
    s->current = 0;
    if (mb_gemm_bench_time(&s->g, lt_call, s, 1, &one, &ignored) == MB_OK && one > 0) {
        double want = ceil(50e-3 / one);
        mb_gemm_bench_time(&s->g, lt_call, s, want > 1000 ? 1000 : (int)want, &unused, &ignored);
    }
    double started = mb_now();
    for (int i = 0; i < s->n_cand; i++) {
        /* Slow GEMMs (fp64 16384^3 on a small GPU takes seconds): stop after
         * a time budget, keeping what was measured. */
        if (i >= 2 && mb_now() - started > LT_TUNE_BUDGET_S) {
            s->tuned = i;
            break;
        }
        s->tuned = i + 1;
        lt_candidate *c = &s->cand[i];
        s->current = i;
        mb_err cerr = { 0 };
        double one = 0, per_call = 0;
        int rc = mb_gemm_bench_time(&s->g, lt_call, s, 1, &one, &cerr);
        per_call = one;
        if (rc == MB_OK && one < 20e-3) { /* short calls: average over ~10 ms */
            double want = one > 0 ? ceil(10e-3 / one) : 2;
            int reps = want < 2 ? 2 : want > 200 ? 200 : (int)want;
            rc = mb_gemm_bench_time(&s->g, lt_call, s, reps, &per_call, &cerr);
        }
        if (rc != MB_OK) {
            snprintf(c->failure, sizeof c->failure, "%.150s", cerr.msg);
            if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
                return mb_errf(err, MB_EFAIL, "cuBLASLt candidate %s broke the CUDA context: %s",
                               c->desc, cerr.msg);
            continue;
        }
        c->seconds = per_call;
        if (s->best < 0 || per_call < s->cand[s->best].seconds)
            s->best = i;
    }
    if (s->best < 0)
        return mb_errf(err, MB_EFAIL, "none of the %d cuBLASLt candidates ran; first: %s",
                       s->n_cand, s->cand[0].failure);
    s->current = s->best;
    return MB_OK;
}

/* ---- the ops table ---------------------------------------------------------------------- */

static void lt_destroy_descriptors(lt_state *s)
{
    if (s->pref)
        cublasLtMatmulPreferenceDestroy(s->pref);
    if (s->la)
        cublasLtMatrixLayoutDestroy(s->la);
    if (s->lb)
        cublasLtMatrixLayoutDestroy(s->lb);
    if (s->lc)
        cublasLtMatrixLayoutDestroy(s->lc);
    if (s->op)
        cublasLtMatmulDescDestroy(s->op);
}

static void lt_teardown(void *state)
{
    lt_state *s = state;
    if (!s)
        return;
    if (s->g.stream)
        cudaStreamSynchronize(s->g.stream);
    lt_destroy_descriptors(s);
    if (s->handle)
        cublasLtDestroy(s->handle);
    mb_gemm_bench_teardown(&s->g);
    free(s);
}

static int lt_setup(const mb_params *params, void **state, mb_err *err)
{
    *state = NULL;
    lt_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    mb_elem out = strcmp(mb_param_str(params, "out"), "fp16") == 0 ? MB_ELEM_F16 : MB_ELEM_BF16;
    s->fast_accum = mb_param_bool(params, "fast_accum");
    int rc = mb_gemm_bench_setup(&s->g, params, out, err);
    if (rc == MB_OK && s->g.scales) {
        s->a_scale = mb_gemm_scale_slot(s->g.scales, MB_GEMM_SCALE_A);
        s->b_scale = mb_gemm_scale_slot(s->g.scales, MB_GEMM_SCALE_B);
    }
    if (rc == MB_OK)
        rc = mb_cublas_err((int)cublasLtCreate(&s->handle), err, "cublasLtCreate");
    if (rc == MB_OK)
        rc = lt_describe(s, s->g.workspace_bytes, err);
    if (rc == MB_OK)
        rc = lt_heuristics(s, (int)mb_param_int(params, "algos"), err);
    if (rc == MB_OK)
        rc = lt_autotune(s, err);
    if (rc == MB_OK)
        rc = mb_gemm_bench_finish_setup(&s->g, s->cand[s->best].seconds, err);
    if (rc != MB_OK) {
        lt_teardown(s);
        return rc;
    }
    *state = s;
    return MB_OK;
}

/* Builds and destroys the descriptors lt_setup would build for `p`: these
 * calls are host-only in cuBLASLt and need no device, so a CPU-only test
 * (tests/test_gpu_contract.c) checks every attribute's type and size, and
 * each layout, against the library itself. The scale pointers are dummies
 * (descriptors only store them) but are checked against cuBLASLt's FP8
 * pointer contract as setup's are: the test gives the layout that failed on
 * the H100 (B's scale 4 bytes after A's) and expects a refusal. */
int mb_gemm_lt_describe_scales(const mb_gemm_problem *p, bool fast_accum, size_t workspace,
                               const float *a_scale, const float *b_scale, mb_err *err)
{
    lt_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    s->g.prob = *p;
    s->a_scale = a_scale;
    s->b_scale = b_scale;
    s->fast_accum = fast_accum;
    int rc = lt_describe(s, workspace, err);
    lt_destroy_descriptors(s);
    free(s);
    return rc;
}

/* The same with the scales where setup puts them: one aligned slot each. */
int mb_gemm_lt_describe_only(const mb_gemm_problem *p, bool fast_accum, size_t workspace, mb_err *err)
{
    static _Alignas(MB_GEMM_SCALE_SLOT_BYTES) unsigned char slots[MB_GEMM_NSCALES *
                                                                  MB_GEMM_SCALE_SLOT_BYTES];
    return mb_gemm_lt_describe_scales(p, fast_accum, workspace,
                                      mb_gemm_scale_slot(slots, MB_GEMM_SCALE_A),
                                      mb_gemm_scale_slot(slots, MB_GEMM_SCALE_B), err);
}

static int lt_probe(const mb_params *params, mb_err *why)
{
    (void)params;
    return mb_cuda_probe(why);
}

static int lt_run(void *state, double *seconds, mb_err *err)
{
    lt_state *s = state;
    return mb_gemm_bench_run(&s->g, lt_call, s, seconds, err);
}

static double lt_work(void *state)
{
    return mb_gemm_bench_work(&((lt_state *)state)->g);
}

static int lt_verify(void *state, mb_err *err)
{
    return mb_gemm_bench_verify(&((lt_state *)state)->g, err);
}

static void lt_report(void *state, mb_report *r)
{
    lt_state *s = state;
    const lt_candidate *best = &s->cand[s->best], *first = &s->cand[0];
    double flops = mb_gemm_problem_flops(&s->g.prob);
    const char *unit = s->g.prob.dtype == MB_GEMM_INT8 ? "TOP/s" : "TFLOP/s";
    mb_gemm_report_math(r, &s->g.prob, s->fast_accum);
    mb_report_info(r, "algorithm", best->desc);
    char text[128];
    snprintf(text, sizeof text, "%zu bytes needed, %zu allowed", best->h.workspaceSize,
             s->g.workspace_bytes);
    mb_report_info(r, "workspace", text);
    mb_report_metric(r, "algorithms_tried", s->tuned, "");
    mb_report_metric(r, "best_algorithm_rank", s->best, "");
    if (first->seconds > 0) {
        mb_report_metric(r, "heuristic_default_rate", flops / first->seconds / 1e12, unit);
        mb_report_info(r, "heuristic_default_algorithm", first->desc);
        if (best->seconds > 0)
            mb_report_metric(r, "best_over_default", first->seconds / best->seconds, "x");
    }
    /* Every candidate with its setup time, in heuristic order. */
    char all[4096] = "";
    size_t used = 0;
    for (int i = 0; i < s->tuned && used < sizeof all - 1; i++) {
        const lt_candidate *c = &s->cand[i];
        int n = c->seconds > 0 ? snprintf(all + used, sizeof all - used, "%s#%d %s: %.3f ms (%.1f %s)",
                                          i ? "; " : "", i, c->desc, c->seconds * 1e3,
                                          flops / c->seconds / 1e12, unit)
                               : snprintf(all + used, sizeof all - used, "%s#%d %s: failed (%s)",
                                          i ? "; " : "", i, c->desc, c->failure);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    mb_report_info(r, "algorithms", all);
    mb_report_note(r, "ceiling = fastest of %d cuBLASLt heuristic candidates timed in setup "
                      "(candidate #%d); heuristic_default_rate is the heuristic's first choice, timed in "
                      "setup over about 10 ms",
                   s->tuned, s->best);
    if (s->tuned < s->n_cand)
        mb_report_note(r, "candidate timing stopped after %d of %d candidates (%.0f s budget)",
                       s->tuned, s->n_cand, LT_TUNE_BUDGET_S);
    mb_gemm_bench_report(&s->g, r);
}

const mb_backend_code mb_gemm_cublaslt = {
    .component = "gemm",
    .backend = "cublaslt",
    .probe = lt_probe,
    .setup = lt_setup,
    .run = lt_run,
    .work_per_iter = lt_work,
    .verify = lt_verify,
    .report = lt_report,
    .teardown = lt_teardown,
};

#else /* !MB_HAVE_CUDA */
MB_NOT_BUILT_IN(mb_gemm_cublaslt, "gemm", "cublaslt", "CUDA toolkit (cuBLASLt) not found at build time");
#endif
