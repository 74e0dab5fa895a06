/* coll_common.h: what the collective backends (coll_mpi.c, coll_nccl.c)
 * share, nccl-tests style: the buffer geometry of a case, the known inputs
 * and their exact expected results, the per-iteration timing samples, the
 * common metrics. The node's network links: platform/nic.h.
 *
 * Sizes follow nccl-tests: `size` is the buffer the bandwidth is computed
 * from, i.e. the one buffer of all-reduce and broadcast, the full gathered
 * (output) buffer of all-gather and the full input buffer of reduce-scatter.
 *
 * Inputs: rank r holds, at global element index i, the small integer
 *     v(r, i) = g(i) + h(r),   g(i) in [1, g_max] pseudo-random per element,
 *                              h(r) = r mod h_mod
 * chosen so that the sum over all ranks is below the dtype's largest exactly
 * representable integer run (2^24 float, 2048 half, 256 bf16): every partial
 * sum in any order is then exact and the check is bit-exact in every dtype.
 * The sum over ranks is n*g(i) + sum_r h(r), computable in O(1) per element.
 */
#ifndef MB_COLL_COMMON_H
#define MB_COLL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "component.h"
#include "formulas.h"
#include "vocabulary.h" /* mb_coll_name */

typedef enum mb_coll_dtype {
    MB_DT_FLOAT,
    MB_DT_DOUBLE,
    MB_DT_HALF,
    MB_DT_BF16,
} mb_coll_dtype;

/* The `dtype` parameter's choices (the same for every backend, so one suite
 * [global] dtype list applies to all; a backend skips what it cannot do). */
#define MB_COLL_DTYPE_CHOICES "float|double|half|bf16"

int mb_coll_dtype_parse(const char *name, mb_coll_dtype *out, mb_err *err);
const char *mb_coll_dtype_name(mb_coll_dtype t);
size_t mb_coll_dtype_size(mb_coll_dtype t);

/* ---- geometry ------------------------------------------------------------ */

typedef struct mb_coll_shape {
    mb_collective coll;
    mb_coll_dtype dtype;
    int nranks;
    /* Elements per rank: the buffer (all-reduce, broadcast), each rank's
     * contribution (all-gather) or each rank's result (reduce-scatter). */
    size_t count;
    size_t in_elems, out_elems; /* per-rank buffer lengths, out of place */
    double bytes; /* the bandwidth's byte count (after rounding to whole elements per rank) */
} mb_coll_shape;

/* MB_ESKIP with the reason when `size` holds less than one element per rank;
 * sizes that do not divide evenly are rounded down (shape->bytes says). */
int mb_coll_shape_init(mb_coll_shape *s, mb_collective coll, mb_coll_dtype dtype,
                       long long size, int nranks, mb_err *err);

/* ---- known inputs and expected outputs ------------------------------------ */

typedef struct mb_coll_pattern {
    mb_coll_dtype dtype;
    int nranks;
    uint64_t seed;
    uint32_t g_max, h_mod;
    double h_sum; /* sum over ranks of h(r) */
} mb_coll_pattern;

/* MB_ESKIP when no exact pattern exists (more ranks than the dtype's exact
 * integer range, e.g. > 256 ranks in bf16): verification impossible. */
int mb_coll_pattern_init(mb_coll_pattern *p, mb_coll_dtype dtype, int nranks, uint64_t seed,
                         mb_err *err);
double mb_coll_value(const mb_coll_pattern *p, int rank, size_t global_index);

/* Writes elements [first, first+n) of `rank`'s input buffer (buf points at
 * element `first`). Out-of-place input layout per collective:
 *   all-reduce, broadcast:   v(rank, i)              i < count
 *   reduce-scatter:          v(rank, i)              i < nranks*count
 *   all-gather:              v(rank, rank*count + i) i < count */
void mb_coll_fill_input(const mb_coll_pattern *p, const mb_coll_shape *s, int rank, void *buf,
                        size_t first, size_t n);
/* Element i of a buffer of dtype t, as a double. */
double mb_coll_load(mb_coll_dtype t, const void *buf, size_t i);
/* Writes `n` copies of `value` (the poison -1 before a run: never a valid result). */
void mb_coll_fill_value(mb_coll_dtype t, void *buf, size_t n, double value);
/* The expected output element `i` on `rank`:
 *   all-reduce:     sum_r v(r, i)
 *   reduce-scatter: sum_r v(r, rank*count + i)
 *   all-gather:     v(i / count, i)
 *   broadcast:      v(root=0, i) */
double mb_coll_expected(const mb_coll_pattern *p, const mb_coll_shape *s, int rank, size_t i);

typedef struct mb_coll_mismatch {
    size_t count;   /* mismatching elements seen */
    size_t first;   /* index of the first one */
    double got, want;
} mb_coll_mismatch;
/* Compares output elements [first, first+n) (buf points at `first`) with
 * mb_coll_expected and accumulates into *m. */
void mb_coll_check_output(const mb_coll_pattern *p, const mb_coll_shape *s, int rank,
                          const void *buf, size_t first, size_t n, mb_coll_mismatch *m);
/* "WHERE: 17 of 1024 elements differ; first at [5]: got 4, expected 6"
 * (where may be NULL: under MPI, mb_dist_agree_err names the rank). */
int mb_coll_mismatch_err(const mb_coll_mismatch *m, const char *where, size_t n, mb_err *err);

/* Test-only hook (docs/collectives.md, tests/test_dist.sh): when
 * $MLBENCH_TEST_CORRUPT_RANK names this rank, subtracts 1 from one element of a
 * result about to be checked, so a test proves that verification catches a
 * wrong result end to end. Does nothing otherwise. */
void mb_coll_test_corrupt(mb_coll_dtype t, void *buf, size_t n, int rank);

/* ---- timing samples -------------------------------------------------------- */

/* Every run()'s collective time (already the max over ranks), so report() can
 * give algbw/busbw/latency from the median iteration. */
typedef struct mb_coll_samples {
    double *s;
    int n, cap;
} mb_coll_samples;
int mb_coll_samples_add(mb_coll_samples *t, double seconds, mb_err *err);
void mb_coll_samples_free(mb_coll_samples *t);

/* Metrics every collective case reports: algbw and busbw (GB/s, from the
 * median time of one collective), latency (us, same median), bytes, ranks,
 * busbw_factor; info collective and dtype; with one rank a note why busbw is
 * 0 and the rate is algbw. `per_run` = collectives per run(). */
void mb_coll_report_common(mb_report *r, const mb_coll_shape *s, const mb_coll_samples *t,
                           int per_run, bool inplace);

/* A collective backend's code for one collective (component.h): its
 * functions are named <prefix>_probe, <prefix>_run, ..., only setup differs
 * per collective. */
#define MB_COLL_CODE(comp, back, prefix, setup_fn)                                                    \
    {                                                                                                  \
        .component = comp, .backend = back, .probe = prefix##_probe, .setup = setup_fn,                \
        .run = prefix##_run, .work_per_iter = prefix##_work, .verify = prefix##_verify,                \
        .report = prefix##_report, .timing_start = prefix##_timing_start, .teardown = prefix##_teardown, \
    }

#endif
