/* mpi_coll_check: the collective backends and harness/dist.c under a real
 * mpirun, through the ops tables as the runner drives them (probe, setup,
 * run x N, verify, report, teardown), without the CLI. Launched by
 * tests/test_dist.sh:
 *
 *   mpirun -np N mpi_coll_check coll          every collective, checks below
 *   mpirun -np N mpi_coll_check sweep SIZES   all-reduce float busbw per size (for the docs)
 *   mpirun -np N mpi_coll_check corrupt       verification must fail on every rank
 *                                             (run with MLBENCH_TEST_CORRUPT_RANK=1)
 *   mpirun -np N mpi_coll_check fleet RANK    host copy per rank, gather, fleet merge:
 *                                             RANK (slowed by the script) must be flagged
 *   mpirun -np 2 mpi_coll_check timeout       rank 1 is late: rank 0's barrier times out
 *
 * Exit status 0 when every check holds; messages on stderr say what did not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_common.h"
#include "dist.h"
#include "dist_extra.h"
#include "formulas.h"
#include "params.h"
#include "case_report.h"

/* The composed tables (description + code), as the harness sees them. */
#define MPI_OPS(comp) (mb_registry_find_builtin(comp, "mpi"))

static int failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "rank %d: CHECK FAILED %s:%d: ", mb_dist_rank(),      \
                    __FILE__, __LINE__);                                          \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            failures++;                                                           \
        }                                                                         \
    } while (0)

/* The factor as the test computes it itself (nccl-tests' PERFORMANCE.md):
 * 0 for one rank, except broadcast. */
static double factor(mb_collective c, int n)
{
    switch (c) {
    case MB_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case MB_COLL_ALLGATHER:
    case MB_COLL_REDUCESCATTER: return (double)(n - 1) / n;
    case MB_COLL_BROADCAST: return 1.0;
    }
    return 0;
}

typedef struct outcome {
    int rc; /* of the first stage that did not succeed */
    char msg[MB_ERR_LEN];
    double busbw, algbw, latency, rate_median;
} outcome;

static double metric(const mb_report *r, const char *name)
{
    const mb_metric *m = mb_report_find_metric(r, name);
    return m ? m->value : NAN;
}

/* One case as the runner drives it. */
static outcome run_case(const mb_component_ops *ops, mb_collective coll, const char *size,
                        const char *dtype, const char *inplace, int iterations)
{
    outcome o = { 0 };
    const char *names[] = { "size", "dtype", "inplace", "warmup" };
    const char *values[] = { size, dtype, inplace, "2" };
    mb_err err = { 0 };
    mb_params *p = mb_params_build(ops->params, names, values, 4, &err);
    void *state = NULL;
    if (p == NULL) {
        o.rc = err.code;
        snprintf(o.msg, sizeof o.msg, "%s", err.msg);
        return o;
    }
    o.rc = ops->probe(p, &err);
    if (o.rc == MB_OK)
        o.rc = ops->setup(p, &state, &err);
    double *sec = calloc((size_t)iterations, sizeof *sec);
    for (int i = 0; o.rc == MB_OK && i < iterations; i++)
        o.rc = ops->run(state, &sec[i], &err);
    if (o.rc == MB_OK) {
        /* Every rank reports the same (slowest rank's) time. */
        for (int i = 0; i < iterations; i++) {
            double lo = sec[i], hi = sec[i];
            mb_dist_min_double(&lo, NULL);
            mb_dist_max_double(&hi, NULL);
            CHECK(lo == hi && hi > 0, "%s %s: iteration %d: times differ over ranks (%g..%g)",
                  ops->component, size, i, lo, hi);
        }
        o.rc = ops->verify(state, &err);
    }
    if (o.rc == MB_OK) {
        mb_report r;
        mb_report_init(&r);
        ops->report(state, &r);
        o.busbw = metric(&r, "busbw");
        o.algbw = metric(&r, "algbw");
        o.latency = metric(&r, "latency");
        double bytes = metric(&r, "bytes"), ranks = metric(&r, "ranks");
        int n = mb_dist_size();
        CHECK(ranks == n, "ranks metric %g, world %d", ranks, n);
        /* busbw recomputed from algbw and n. */
        CHECK(fabs(o.busbw - o.algbw * factor(coll, n)) <= 1e-9 * o.busbw,
              "%s: busbw %g != algbw %g x %g", ops->component, o.busbw, o.algbw, factor(coll, n));
        /* algbw = bytes / median time; latency is that median. */
        CHECK(fabs(o.algbw - bytes / (o.latency * 1e-6) / 1e9) <= 1e-6 * o.algbw, "algbw vs latency");
        /* The runner's rate (work / seconds) is busbw, in GB/s; with one rank
         * (busbw 0) it is algbw, and a note says why. */
        double med = mb_median(sec, iterations);
        o.rate_median = ops->work_per_iter(state) / med / ops->rate_scale;
        double want = factor(coll, n) > 0 ? o.busbw : o.algbw;
        CHECK(want > 0 && fabs(o.rate_median - want) <= 1e-9 * want, "%s: rate %g != %s %g", ops->component,
              o.rate_median, factor(coll, n) > 0 ? "busbw" : "algbw", want);
        if (factor(coll, n) == 0) {
            bool said = false;
            for (int i = 0; i < r.n_notes; i++)
                said = said || strstr(r.notes[i], "one rank: no bus traffic") != NULL;
            CHECK(o.busbw == 0 && said, "%s on one rank: busbw %g, note %s", ops->component, o.busbw,
                  said ? "present" : "missing");
        }
        mb_report_free(&r);
    }
    if (o.rc != MB_OK)
        snprintf(o.msg, sizeof o.msg, "%s", err.msg);
    free(sec);
    ops->teardown(state);
    mb_params_free(p);
    return o;
}

static int mode_coll(void)
{
    struct {
        const mb_component_ops *ops;
        mb_collective coll;
    } colls[] = {
        { MPI_OPS("allreduce"), MB_COLL_ALLREDUCE },
        { MPI_OPS("allgather"), MB_COLL_ALLGATHER },
        { MPI_OPS("reducescatter"), MB_COLL_REDUCESCATTER },
        { MPI_OPS("broadcast"), MB_COLL_BROADCAST },
    };
    const char *sizes[] = { "8", "4k", "1m" };
    const char *dtypes[] = { "float", "double" };
    for (size_t c = 0; c < 4; c++)
        for (size_t s = 0; s < 3; s++)
            for (size_t d = 0; d < 2; d++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    outcome o = run_case(colls[c].ops, colls[c].coll, sizes[s], dtypes[d],
                                         inplace ? "1" : "0", 5);
                    /* 8 B split over n ranks holds no double (nor, over 3, a float). */
                    size_t es = strcmp(dtypes[d], "double") == 0 ? 8 : 4;
                    bool split = colls[c].coll == MB_COLL_ALLGATHER || colls[c].coll == MB_COLL_REDUCESCATTER;
                    bool expect_skip = (colls[c].coll == MB_COLL_BROADCAST && !inplace) ||
                                       (strcmp(sizes[s], "8") == 0 && split && 8 / (es * mb_dist_size()) == 0);
                    if (expect_skip)
                        CHECK(o.rc == MB_ESKIP && o.msg[0], "%s size %s inplace %d: expected a skip, got %d %s",
                              colls[c].ops->component, sizes[s], inplace, o.rc, o.msg);
                    else
                        CHECK(o.rc == MB_OK, "%s size %s %s inplace %d: %d %s", colls[c].ops->component,
                              sizes[s], dtypes[d], inplace, o.rc, o.msg);
                    if (mb_dist_rank() == 0 && o.rc == MB_OK)
                        printf("%-14s %-6s %-12s %8s B: busbw %8.3f GB/s  algbw %8.3f GB/s  %9.1f us\n",
                               colls[c].ops->component, dtypes[d], inplace ? "in-place" : "out-of-place",
                               sizes[s], o.busbw, o.algbw, o.latency);
                }
    /* half and bf16 have no MPI type: skipped with the reason. */
    outcome o = run_case(MPI_OPS("allreduce"), MB_COLL_ALLREDUCE, "4k", "half", "0", 2);
    CHECK(o.rc == MB_ESKIP && strstr(o.msg, "no standard MPI datatype"), "half: %d %s", o.rc, o.msg);
    return 0;
}

static int mode_sweep(const char *list, int iterations)
{
    char *copy = strdup(list), *save = NULL;
    int n = mb_dist_size();
    if (mb_dist_rank() == 0)
        printf("all-reduce, MPI, float, out-of-place, %d ranks on %d node(s); %d iterations\n"
               "%12s %12s %12s %12s\n",
               n, mb_dist_nodes(), iterations, "size (B)", "latency us", "algbw GB/s", "busbw GB/s");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        outcome o = run_case(MPI_OPS("allreduce"), MB_COLL_ALLREDUCE, tok, "float", "0", iterations);
        CHECK(o.rc == MB_OK, "size %s: %s", tok, o.msg);
        if (mb_dist_rank() == 0 && o.rc == MB_OK)
            printf("%12s %12.1f %12.3f %12.3f\n", tok, o.latency, o.algbw, o.busbw);
    }
    free(copy);
    return 0;
}

static int mode_corrupt(void)
{
    const char *bad = getenv("MLBENCH_TEST_CORRUPT_RANK");
    CHECK(bad != NULL, "MLBENCH_TEST_CORRUPT_RANK not set");
    for (int inplace = 0; inplace < 2; inplace++) {
        outcome o = run_case(MPI_OPS("allreduce"), MB_COLL_ALLREDUCE, "64k", "float", inplace ? "1" : "0", 3);
        char want[32];
        snprintf(want, sizeof want, "rank %s (", bad ? bad : "?");
        CHECK(o.rc == MB_EVERIFY, "inplace %d: verification did not fail (rc %d)", inplace, o.rc);
        CHECK(strstr(o.msg, want) && strstr(o.msg, "differ"), "message does not name %s: %s", want, o.msg);
        if (mb_dist_rank() == 0)
            printf("corrupt (inplace %d): %s\n", inplace, o.msg);
    }
    return 0;
}

/* Each rank's own host copy rate, gathered and merged as fleet mode does. */
static int mode_fleet(int slow_rank)
{
    /* Repetitions of ~100 ms or more, each spanning several of the slowed
     * rank's stop/continue cycles; everybody starts together. */
    size_t bytes = 32u << 20;
    char *a = malloc(bytes), *b = malloc(bytes);
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double rates[9];
    mb_err berr = { 0 };
    CHECK(mb_dist_barrier(60, &berr) == MB_OK, "barrier: %s", berr.msg);
    for (int rep = 0; rep < 9; rep++) {
        double t0 = mb_now();
        for (int i = 0; i < 16; i++) {
            memcpy(b, a, bytes);
            a[i] = (char)i; /* keep the copies from being merged */
        }
        rates[rep] = 16.0 * bytes / (mb_now() - t0) / 1e9;
    }
    CHECK(memcmp(a + 8, b + 8, bytes - 8) == 0, "copy differs");
    fprintf(stderr, "rank %d: copy rates %.2f .. %.2f GB/s\n", mb_dist_rank(), mb_min(rates, 9), mb_max(rates, 9));
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "id", "test/memcpy");
    cJSON_AddStringToObject(rec, "status", "ok");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(rec, "rate"), "median", mb_median(rates, 9));
    mb_err err = { 0 };
    cJSON *all = mb_dist_gather_json(rec, 60, &err);
    CHECK(err.code == MB_OK, "gather: %s", err.msg);
    if (mb_dist_rank() == 0) {
        CHECK(cJSON_GetArraySize(all) == mb_dist_size(), "gathered %d records", cJSON_GetArraySize(all));
        mb_dist_fleet_merge(rec, all, 0.10);
        char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "ranks"));
        printf("ranks: %s\n", text);
        free(text);
        text = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "fleet"));
        printf("fleet: %s\n", text);
        free(text);
        bool found = false;
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "fleet"), "flagged"))
            found |= cJSON_GetObjectItem(f, "rank")->valueint == slow_rank;
        CHECK(found, "rank %d was not flagged", slow_rank);
        cJSON *doc = cJSON_CreateObject();
        cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
        cJSON_AddItemToArray(cases, cJSON_Duplicate(rec, 1));
        mb_dist_fleet_print(stdout, doc);
        cJSON_Delete(doc);
    }
    cJSON_Delete(all);
    cJSON_Delete(rec);
    free(a);
    free(b);
    return 0;
}

/* Rank 1 arrives 5 s late; rank 0's barrier gives up after 2 s, names it,
 * and stops the job. The script checks the message and that it was quick. */
static int mode_timeout(void)
{
    mb_err err = { 0 };
    if (mb_dist_rank() == 1)
        sleep(5);
    if (mb_dist_barrier(2, &err) != MB_OK)
        mb_dist_abort(err.msg);
    fprintf(stderr, "rank %d: barrier passed (unexpected on rank 0)\n", mb_dist_rank());
    return 1;
}

/* Rank 1's process ends between two collectives (killed between two cases);
 * rank 0's next status agreement gives up after 2 s and must name rank 1 as
 * gone, not only say that "the other ranks did not answer". Run under mpirun
 * --enable-recovery, so the launcher lets rank 0 find out by itself. */
static int mode_agree_gone(void)
{
    if (mb_dist_rank() == 1)
        _exit(0);
    mb_dist_set_timeout(2);
    sleep(1); /* rank 1 is gone by now (its pid is checked, not waited for) */
    mb_dist_agree(MB_OK);
    fprintf(stderr, "rank %d: the agreement passed (unexpected)\n", mb_dist_rank());
    return 1;
}

int main(int argc, char **argv)
{
    mb_err err = { 0 };
    if (mb_dist_init(&argc, &argv, &err) != MB_OK) {
        fprintf(stderr, "mb_dist_init: %s\n", err.msg);
        return 2;
    }
    const char *mode = argc > 1 ? argv[1] : "coll";
    if (mb_dist_rank() == 0)
        fprintf(stderr, "%s\n", mb_dist_describe());
    /* coll runs on one rank too (busbw 0, rate algbw); the rest need two. */
    if (mb_dist_size() < (strcmp(mode, "coll") == 0 ? 1 : 2)) {
        fprintf(stderr, "needs 2 or more ranks (mpirun -np N)\n");
        mb_dist_finalize();
        return 77;
    }
    int rc = 0;
    if (strcmp(mode, "coll") == 0)
        rc = mode_coll();
    else if (strcmp(mode, "sweep") == 0)
        rc = mode_sweep(argc > 2 ? argv[2] : "8,1k,64k,1m,16m", argc > 3 ? atoi(argv[3]) : 20);
    else if (strcmp(mode, "corrupt") == 0)
        rc = mode_corrupt();
    else if (strcmp(mode, "fleet") == 0)
        rc = mode_fleet(argc > 2 ? atoi(argv[2]) : 2);
    else if (strcmp(mode, "timeout") == 0)
        rc = mode_timeout();
    else if (strcmp(mode, "agree_gone") == 0)
        rc = mode_agree_gone();
    else {
        fprintf(stderr, "unknown mode %s\n", mode);
        rc = 2;
    }
    fflush(stdout);
    int worst = mb_dist_agree(failures ? 1 : rc);
    mb_dist_finalize();
    return worst;
}
