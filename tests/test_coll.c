/* Collectives without MPI ranks: the bus-bandwidth formulas (known answers),
 * the case geometry, the exact known-input pattern in every dtype (a host
 * simulation of each collective must verify, a corrupted or incomplete one
 * must not), the NIC reader, the fleet merge, the baseline check, and dist's
 * world of one. The MPI paths run under mpirun in tests/test_dist.sh. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "baseline.h"
#include "coll_common.h"
#include "dist.h"
#include "dist_extra.h"
#include "formulas.h"
#include "nic.h"
#include "params.h"
#include "case_report.h"
#include "results.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static void test_busbw_known_answers(void **s)
{
    (void)s;
    /* nccl-tests' factors: all-reduce 2(n-1)/n. */
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 2), 1.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 3), 4.0 / 3.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 8), 14.0 / 8.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 16), 30.0 / 16.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLGATHER, 3), 2.0 / 3.0);
    CLOSE(mb_busbw_factor(MB_COLL_REDUCESCATTER, 8), 7.0 / 8.0);
    CLOSE(mb_busbw_factor(MB_COLL_BROADCAST, 8), 1.0);
    CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, 1), 0.0);
    /* 1 GB all-reduced in 0.5 s on 4 ranks: algbw 2 GB/s, busbw 3 GB/s. */
    CLOSE(mb_algbw(1e9, 0.5), 2e9);
    CLOSE(mb_busbw(MB_COLL_ALLREDUCE, 1e9, 0.5, 4), 3e9);
    CLOSE(mb_busbw(MB_COLL_ALLGATHER, 1e9, 0.5, 4), 1.5e9);
}

/* One rank (NCCL on one GPU, mpirun -np 1): busbw's factor is 0, so the work
 * per iteration falls back to the algorithm bytes (factor 1) instead of 0,
 * which the runner rejects ("no work per iteration"). */
static void test_work_factor_known_answers(void **s)
{
    (void)s;
    const int n[] = { 1, 2, 3, 8 };
    const double allreduce[] = { 1.0, 1.0, 4.0 / 3.0, 14.0 / 8.0 };
    const double gather[] = { 1.0, 0.5, 2.0 / 3.0, 7.0 / 8.0 };
    const double bus_allreduce[] = { 0.0, 1.0, 4.0 / 3.0, 14.0 / 8.0 };
    const double bus_gather[] = { 0.0, 0.5, 2.0 / 3.0, 7.0 / 8.0 };
    for (int i = 0; i < 4; i++) {
        CLOSE(mb_busbw_factor(MB_COLL_ALLREDUCE, n[i]), bus_allreduce[i]);
        CLOSE(mb_busbw_factor(MB_COLL_ALLGATHER, n[i]), bus_gather[i]);
        CLOSE(mb_busbw_factor(MB_COLL_REDUCESCATTER, n[i]), bus_gather[i]);
        CLOSE(mb_busbw_factor(MB_COLL_BROADCAST, n[i]), 1.0);
        CLOSE(mb_coll_work_factor(MB_COLL_ALLREDUCE, n[i]), allreduce[i]);
        CLOSE(mb_coll_work_factor(MB_COLL_ALLGATHER, n[i]), gather[i]);
        CLOSE(mb_coll_work_factor(MB_COLL_REDUCESCATTER, n[i]), gather[i]);
        CLOSE(mb_coll_work_factor(MB_COLL_BROADCAST, n[i]), 1.0);
    }
    /* 1 MiB all-reduced on one rank in 100 us: algbw 10.49 GB/s, busbw 0. */
    CLOSE(mb_algbw(1048576, 100e-6), 1048576 / 100e-6);
    CLOSE(mb_busbw(MB_COLL_ALLREDUCE, 1048576, 100e-6, 1), 0.0);
}

static bool has_note(const mb_report *r, const char *text)
{
    for (int i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], text))
            return true;
    return false;
}

/* The metrics and note of a one-rank case: busbw 0 with the reason. */
static void test_report_one_rank(void **s)
{
    (void)s;
    mb_coll_shape sh;
    mb_err err = { 0 };
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLREDUCE, MB_DT_FLOAT, 1048576, 1, &err), MB_OK);
    double t[] = { 200e-6, 100e-6, 300e-6 };
    mb_coll_samples samples = { .s = t, .n = 3, .cap = 3 };
    mb_report r;
    mb_report_init(&r);
    mb_coll_report_common(&r, &sh, &samples, 1, false);
    CLOSE(mb_report_find_metric(&r, "busbw")->value, 0.0);
    CLOSE(mb_report_find_metric(&r, "algbw")->value, 1048576 / 200e-6 / 1e9);
    CLOSE(mb_report_find_metric(&r, "latency")->value, 200.0);
    assert_true(has_note(&r, "one rank: no bus traffic, so busbw is 0"));
    assert_false(has_note(&r, "nothing to move"));
    mb_report_free(&r);
    /* In place on one rank nothing moves: the note says to read the latency. */
    mb_report_init(&r);
    mb_coll_report_common(&r, &sh, &samples, 1, true);
    assert_true(has_note(&r, "in place the library has nothing to move"));
    mb_report_free(&r);
    /* Two ranks: busbw = algbw, no such note. */
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLREDUCE, MB_DT_FLOAT, 1048576, 2, &err), MB_OK);
    mb_report_init(&r);
    mb_coll_report_common(&r, &sh, &samples, 1, false);
    CLOSE(mb_report_find_metric(&r, "busbw")->value, mb_report_find_metric(&r, "algbw")->value);
    assert_false(has_note(&r, "no bus traffic"));
    mb_report_free(&r);
}

static void test_shape(void **s)
{
    (void)s;
    mb_coll_shape sh;
    mb_err err = { 0 };
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLREDUCE, MB_DT_FLOAT, 1024, 3, &err), MB_OK);
    assert_int_equal(sh.count, 256);
    CLOSE(sh.bytes, 1024);
    /* All-gather: 1024 B gathered over 3 ranks of floats = 85 each, 1020 B. */
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLGATHER, MB_DT_FLOAT, 1024, 3, &err), MB_OK);
    assert_int_equal(sh.count, 85);
    assert_int_equal(sh.in_elems, 85);
    assert_int_equal(sh.out_elems, 255);
    CLOSE(sh.bytes, 1020);
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_REDUCESCATTER, MB_DT_HALF, 64, 4, &err), MB_OK);
    assert_int_equal(sh.in_elems, 32);
    assert_int_equal(sh.out_elems, 8);
    /* 8 B cannot give 3 ranks a float each. */
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLGATHER, MB_DT_FLOAT, 8, 3, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "per rank"));
    mb_err_clear(&err);
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLREDUCE, MB_DT_DOUBLE, 4, 2, &err), MB_ESKIP);
}

/* Rounds a value to the dtype, as storing it there does. */
static double in_dtype(mb_coll_dtype t, double v)
{
    unsigned char buf[8];
    mb_coll_fill_value(t, buf, 1, v);
    return mb_coll_load(t, buf, 0);
}

/* All-reduce on the host in the dtype's own precision: every partial sum is
 * rounded to the dtype, as a device adding in that type would. */
static void simulate_allreduce(const mb_coll_pattern *p, const mb_coll_shape *sh, void *out,
                               bool drop_last_rank)
{
    size_t es = mb_coll_dtype_size(sh->dtype);
    unsigned char *in = malloc(sh->count * es);
    double *acc = calloc(sh->count, sizeof *acc);
    int ranks = drop_last_rank ? p->nranks - 1 : p->nranks;
    for (int r = 0; r < ranks; r++) {
        mb_coll_fill_input(p, sh, r, in, 0, sh->count);
        for (size_t i = 0; i < sh->count; i++)
            acc[i] = in_dtype(sh->dtype, acc[i] + mb_coll_load(sh->dtype, in, i));
    }
    for (size_t i = 0; i < sh->count; i++)
        mb_coll_fill_value(sh->dtype, (unsigned char *)out + i * es, 1, acc[i]);
    free(in);
    free(acc);
}

static void check_allreduce_dtype(mb_coll_dtype t, int nranks)
{
    mb_coll_shape sh;
    mb_coll_pattern p;
    mb_err err = { 0 };
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLREDUCE, t, 4096, nranks, &err), MB_OK);
    assert_int_equal(mb_coll_pattern_init(&p, t, nranks, 42, &err), MB_OK);
    /* Every value is a positive integer; the largest sum stays exact. */
    double limit = t == MB_DT_BF16 ? 256 : t == MB_DT_HALF ? 2048 : 16777216;
    assert_true(nranks * (double)p.g_max + p.h_sum <= limit);
    unsigned char *out = malloc(sh.count * mb_coll_dtype_size(t));
    simulate_allreduce(&p, &sh, out, false);
    mb_coll_mismatch m = { 0 };
    mb_coll_check_output(&p, &sh, 0, out, 0, sh.count, &m);
    assert_int_equal(m.count, 0);

    /* One corrupted element is caught, at the right index. */
    /* minus 1: at the top of the exact range (bf16 256) plus 1 would round back */
    mb_coll_fill_value(t, out + 17 * mb_coll_dtype_size(t), 1, mb_coll_expected(&p, &sh, 0, 17) - 1);
    mb_coll_check_output(&p, &sh, 0, out, 0, sh.count, &m);
    assert_int_equal(m.count, 1);
    assert_int_equal(m.first, 17);
    assert_int_equal(mb_coll_mismatch_err(&m, "GPU 0", sh.count, &err), MB_EVERIFY);
    assert_non_null(strstr(err.msg, "GPU 0: 1 of "));
    assert_non_null(strstr(err.msg, "[17]"));

    /* A missing rank changes every element. */
    mb_coll_mismatch m2 = { 0 };
    simulate_allreduce(&p, &sh, out, true);
    mb_coll_check_output(&p, &sh, 0, out, 0, sh.count, &m2);
    assert_int_equal(m2.count, sh.count);
    free(out);
}

static void test_pattern_exact_every_dtype(void **s)
{
    (void)s;
    check_allreduce_dtype(MB_DT_FLOAT, 3);
    check_allreduce_dtype(MB_DT_DOUBLE, 2);
    check_allreduce_dtype(MB_DT_HALF, 8);
    check_allreduce_dtype(MB_DT_BF16, 2);
    check_allreduce_dtype(MB_DT_BF16, 16);
    check_allreduce_dtype(MB_DT_BF16, 256);
    /* Inputs are never zero and not all equal. */
    mb_coll_pattern p;
    assert_int_equal(mb_coll_pattern_init(&p, MB_DT_FLOAT, 4, 7, NULL), MB_OK);
    double first = mb_coll_value(&p, 0, 0);
    bool varies = false;
    for (size_t i = 0; i < 1000; i++) {
        assert_true(mb_coll_value(&p, 1, i) >= 1);
        varies |= mb_coll_value(&p, 0, i) != first;
    }
    assert_true(varies);
    /* More ranks than bf16's exact range: no exact check, said so. */
    mb_err err = { 0 };
    assert_int_equal(mb_coll_pattern_init(&p, MB_DT_BF16, 300, 1, &err), MB_ESKIP);
    assert_non_null(strstr(err.msg, "exact"));
}

/* All-gather, reduce-scatter and broadcast simulated on the host. */
static void test_other_collectives(void **s)
{
    (void)s;
    const int n = 3;
    mb_coll_shape sh;
    mb_coll_pattern p;
    assert_int_equal(mb_coll_pattern_init(&p, MB_DT_FLOAT, n, 5, NULL), MB_OK);

    /* all-gather: rank q's input lands at q*count. */
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_ALLGATHER, MB_DT_FLOAT, 3000, n, NULL), MB_OK);
    float *out = calloc(sh.out_elems, sizeof *out);
    for (int q = 0; q < n; q++)
        mb_coll_fill_input(&p, &sh, q, out + (size_t)q * sh.count, 0, sh.count);
    mb_coll_mismatch m = { 0 };
    mb_coll_check_output(&p, &sh, 1, out, 0, sh.out_elems, &m);
    assert_int_equal(m.count, 0);
    /* Two blocks swapped: caught. */
    float *tmp = malloc(sh.count * sizeof *tmp);
    memcpy(tmp, out, sh.count * sizeof *tmp);
    memcpy(out, out + sh.count, sh.count * sizeof *tmp);
    memcpy(out + sh.count, tmp, sh.count * sizeof *tmp);
    mb_coll_check_output(&p, &sh, 1, out, 0, sh.out_elems, &m);
    assert_true(m.count > 0);
    free(tmp);
    free(out);

    /* reduce-scatter: rank r gets the sum of block r. */
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_REDUCESCATTER, MB_DT_FLOAT, 3000, n, NULL), MB_OK);
    float *in = malloc(sh.in_elems * sizeof *in);
    double *sum = calloc(sh.in_elems, sizeof *sum);
    for (int q = 0; q < n; q++) {
        mb_coll_fill_input(&p, &sh, q, in, 0, sh.in_elems);
        for (size_t i = 0; i < sh.in_elems; i++)
            sum[i] += in[i];
    }
    for (int r = 0; r < n; r++) {
        float *res = malloc(sh.count * sizeof *res);
        for (size_t i = 0; i < sh.count; i++)
            res[i] = (float)sum[(size_t)r * sh.count + i];
        mb_coll_mismatch mr = { 0 };
        mb_coll_check_output(&p, &sh, r, res, 0, sh.count, &mr);
        assert_int_equal(mr.count, 0);
        /* The wrong rank's block fails. */
        mb_coll_check_output(&p, &sh, (r + 1) % n, res, 0, sh.count, &mr);
        assert_true(mr.count > 0);
        free(res);
    }
    free(in);
    free(sum);

    /* broadcast: rank 0's input everywhere; a non-root's own input fails,
     * and so does the poison an untouched buffer holds. */
    assert_int_equal(mb_coll_shape_init(&sh, MB_COLL_BROADCAST, MB_DT_FLOAT, 4000, n, NULL), MB_OK);
    float *b = malloc(sh.count * sizeof *b);
    mb_coll_fill_input(&p, &sh, 0, b, 0, sh.count);
    mb_coll_mismatch mb0 = { 0 }, mb1 = { 0 }, mb2 = { 0 };
    mb_coll_check_output(&p, &sh, 2, b, 0, sh.count, &mb0);
    assert_int_equal(mb0.count, 0);
    mb_coll_fill_input(&p, &sh, 1, b, 0, sh.count);
    mb_coll_check_output(&p, &sh, 2, b, 0, sh.count, &mb1);
    assert_int_equal(mb1.count, sh.count);
    mb_coll_fill_value(MB_DT_FLOAT, b, sh.count, -1);
    mb_coll_check_output(&p, &sh, 2, b, 0, sh.count, &mb2);
    assert_int_equal(mb2.count, sh.count);
    free(b);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void fake_nic(const char *root, const char *name, bool device, const char *state, const char *speed)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    mkdir(dir, 0755);
    if (device) {
        char dev[600];
        snprintf(dev, sizeof dev, "%s/device", dir);
        mkdir(dev, 0755);
    }
    put(dir, "operstate", state);
    put(dir, "speed", speed);
}

static void test_nic_speeds(void **s)
{
    (void)s;
    char root[] = "/tmp/mb_test_net_XXXXXX";
    assert_non_null(mkdtemp(root));
    fake_nic(root, "lo", false, "unknown\n", "-1\n");
    fake_nic(root, "eth0", true, "up\n", "100000\n");    /* 100 Gb/s */
    fake_nic(root, "ib0", true, "up\n", "400000\n");     /* 400 Gb/s */
    fake_nic(root, "eth1", true, "down\n", "25000\n");   /* down: not counted */
    fake_nic(root, "veth9", false, "up\n", "10000\n");   /* virtual: not counted */
    fake_nic(root, "eth2", true, "up\n", "-1\n");        /* unknown speed */
    char names[256];
    CLOSE(mb_nic_gbps_at(root, names, sizeof names), 62.5); /* 500 Gb/s = 62.5 GB/s */
    assert_string_equal(names, "eth0 100000 Mb/s, ib0 400000 Mb/s"); /* sorted by name */
    CLOSE(mb_nic_gbps_at("/nonexistent", NULL, 0), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static cJSON *rank_case(const char *status, double rate, const char *reason)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "id", "hostmem/memcpy/size=1g");
    cJSON_AddStringToObject(c, "status", status);
    if (reason)
        cJSON_AddStringToObject(c, "reason", reason);
    else
        cJSON_AddNullToObject(c, "reason");
    if (rate > 0) {
        cJSON *r = cJSON_AddObjectToObject(c, "rate");
        cJSON_AddNumberToObject(r, "median", rate);
    } else {
        cJSON_AddNullToObject(c, "rate");
    }
    return c;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void test_fleet_merge(void **s)
{
    (void)s;
    cJSON *all = cJSON_CreateArray();
    cJSON_AddItemToArray(all, rank_case("ok", 10.0, NULL));
    cJSON_AddItemToArray(all, rank_case("ok", 10.5, NULL));
    cJSON_AddItemToArray(all, rank_case("ok", 9.8, NULL)); /* 1% below: not flagged */
    cJSON_AddItemToArray(all, rank_case("ok", 7.0, NULL)); /* 29% below */
    cJSON_AddItemToArray(all, rank_case("skipped", 0, "no GPU"));
    cJSON *root = rank_case("ok", 10.0, NULL);
    mb_dist_fleet_merge(root, all, 0.10);
    const cJSON *fleet = cJSON_GetObjectItem(root, "fleet");
    CLOSE(num(fleet, "median"), 9.9); /* of 7, 9.8, 10, 10.5 */
    CLOSE(num(fleet, "min"), 7.0);
    CLOSE(num(fleet, "max"), 10.5);
    CLOSE(num(fleet, "margin"), 0.10);
    const cJSON *flagged = cJSON_GetObjectItem(fleet, "flagged");
    assert_int_equal(cJSON_GetArraySize(flagged), 1);
    const cJSON *f = cJSON_GetArrayItem(flagged, 0);
    CLOSE(num(f, "rank"), 3);
    CLOSE(num(f, "below_median"), (9.9 - 7.0) / 9.9);
    assert_non_null(cJSON_GetObjectItem(f, "host"));
    const cJSON *ranks = cJSON_GetObjectItem(root, "ranks");
    assert_int_equal(cJSON_GetArraySize(ranks), 5);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(ranks, 4), "rate")));
    assert_string_equal(cJSON_GetObjectItem(root, "status")->valuestring, "ok"); /* a skip is no failure */
    /* A wider margin flags nobody. */
    mb_dist_fleet_merge(root, all, 0.30);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "fleet"), "flagged")), 0);
    /* A rank that failed fails the merged case; one that never answered too. */
    cJSON_AddItemToArray(all, rank_case("failed", 0, "verification failed: rank 5: 3 of 9 elements differ"));
    mb_dist_fleet_merge(root, all, 0.10);
    assert_string_equal(cJSON_GetObjectItem(root, "status")->valuestring, "failed");
    assert_non_null(strstr(cJSON_GetObjectItem(root, "reason")->valuestring, "rank 5"));
    cJSON_Delete(root);
    root = rank_case("ok", 10.0, NULL);
    cJSON *two = cJSON_CreateArray();
    cJSON_AddItemToArray(two, rank_case("ok", 10.0, NULL));
    cJSON_AddItemToArray(two, cJSON_CreateNull());
    mb_dist_fleet_merge(root, two, 0.10);
    assert_string_equal(cJSON_GetObjectItem(root, "status")->valuestring, "failed");
    assert_non_null(strstr(cJSON_GetObjectItem(root, "reason")->valuestring, "did not answer"));
    cJSON_Delete(two);
    cJSON_Delete(root);
    cJSON_Delete(all);
}

static cJSON *results_doc(int version)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "schema", "mlbench-results");
    cJSON_AddNumberToObject(d, "schema_version", version);
    cJSON_AddArrayToObject(d, "cases");
    return d;
}

static void add_case(cJSON *doc, const char *id, const char *status, double rate)
{
    cJSON *c = rank_case(status, rate, status[0] == 'o' ? NULL : "why");
    cJSON_ReplaceItemInObject(c, "id", cJSON_CreateString(id));
    cJSON_AddStringToObject(c, "rate_unit", "GB/s");
    cJSON_AddItemToArray(cJSON_GetObjectItem(doc, "cases"), c);
}

static void test_baseline(void **s)
{
    (void)s;
    cJSON *base = results_doc(1), *run = results_doc(1), *out = NULL;
    add_case(base, "a", "ok", 100);
    add_case(base, "b", "ok", 100);
    add_case(base, "c", "ok", 100);
    add_case(base, "d", "ok", 100);
    add_case(base, "only-base", "ok", 1);
    add_case(run, "a", "ok", 95);      /* 5% below: within 10% */
    add_case(run, "b", "ok", 85);      /* 15% below: fails */
    add_case(run, "c", "failed", 0);   /* failed here: fails */
    add_case(run, "d", "skipped", 0);  /* not compared */
    add_case(run, "only-run", "ok", 1);
    mb_err err = { 0 };
    assert_int_equal(mb_baseline_check(run, base, 0.10, &out, &err), MB_EFAIL);
    assert_non_null(strstr(err.msg, "2 of 3"));
    assert_int_equal((int)num(out, "compared"), 3);
    assert_int_equal((int)num(out, "passed"), 1);
    const cJSON *failed = cJSON_GetObjectItem(out, "failed");
    assert_int_equal(cJSON_GetArraySize(failed), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(failed, 0), "id")->valuestring, "b");
    CLOSE(num(cJSON_GetArrayItem(failed, 0), "ratio"), 0.85);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(failed, 1), "id")->valuestring, "c");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(out, "not_compared")), 3); /* d, only-run, only-base */
    cJSON_Delete(out);

    /* A looser tolerance passes b. */
    mb_err_clear(&err);
    assert_int_equal(mb_baseline_check(run, base, 0.20, &out, &err), MB_EFAIL); /* c still failed */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(out, "failed")), 1);
    cJSON_Delete(out);

    /* Fleet mode: each rank against the baseline. */
    cJSON *fleet = results_doc(1);
    add_case(fleet, "a", "ok", 100);
    cJSON *all = cJSON_CreateArray();
    cJSON_AddItemToArray(all, rank_case("ok", 100, NULL));
    cJSON_AddItemToArray(all, rank_case("ok", 80, NULL));
    mb_dist_fleet_merge(cJSON_GetArrayItem(cJSON_GetObjectItem(fleet, "cases"), 0), all, 0.10);
    mb_err_clear(&err);
    assert_int_equal(mb_baseline_check(fleet, base, 0.10, &out, &err), MB_EFAIL);
    failed = cJSON_GetObjectItem(out, "failed");
    assert_int_equal(cJSON_GetArraySize(failed), 1);
    CLOSE(num(cJSON_GetArrayItem(failed, 0), "rank"), 1);
    cJSON_Delete(out);
    cJSON_Delete(all);
    cJSON_Delete(fleet);

    /* A collective: every rank the same time, so one failure for the case. */
    cJSON *coll = results_doc(1);
    add_case(coll, "a", "ok", 50);
    all = cJSON_CreateArray();
    for (int r = 0; r < 3; r++)
        cJSON_AddItemToArray(all, rank_case("ok", 50, NULL));
    mb_dist_fleet_merge(cJSON_GetArrayItem(cJSON_GetObjectItem(coll, "cases"), 0), all, 0.10);
    mb_err_clear(&err);
    assert_int_equal(mb_baseline_check(coll, base, 0.10, &out, &err), MB_EFAIL);
    failed = cJSON_GetObjectItem(out, "failed");
    assert_int_equal(cJSON_GetArraySize(failed), 1);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(failed, 0), "rank"));
    cJSON_Delete(out);
    cJSON_Delete(all);
    cJSON_Delete(coll);

    /* Same file passes; a schema_version this mlbench does not read and junk
     * are usage errors. */
    mb_err_clear(&err);
    assert_int_equal(mb_baseline_check(base, base, 0.10, &out, &err), MB_OK);
    cJSON_Delete(out);
    cJSON *v2 = results_doc(MB_RESULTS_SCHEMA_VERSION + 1);
    assert_int_equal(mb_baseline_check(run, v2, 0.10, &out, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "schema_version"));
    assert_null(out);
    mb_err_clear(&err);
    cJSON *junk = cJSON_CreateObject();
    assert_int_equal(mb_baseline_check(run, junk, 0.10, &out, &err), MB_EUSAGE);
    mb_err_clear(&err);
    assert_int_equal(mb_baseline_check(run, base, 1.5, &out, &err), MB_EUSAGE);
    cJSON_Delete(junk);
    cJSON_Delete(v2);
    cJSON_Delete(base);
    cJSON_Delete(run);
}

static void test_world_of_one(void **s)
{
    (void)s;
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("SLURM_PROCID");
    int argc = 1;
    char *args[] = { "test_coll", NULL }, **argv = args;
    mb_err err = { 0 };
    assert_int_equal(mb_dist_init(&argc, &argv, &err), MB_OK);
    assert_int_equal(mb_dist_rank(), 0);
    assert_int_equal(mb_dist_size(), 1);
    assert_false(mb_dist_active());
    assert_int_equal(mb_dist_local_rank(), 0);
    assert_int_equal(mb_dist_barrier(1, &err), MB_OK);
    assert_int_equal(mb_dist_agree(MB_EVERIFY), MB_EVERIFY);
    assert_non_null(strstr(mb_dist_describe(), "single"));
    cJSON *mine = cJSON_CreateString("x");
    cJSON *all = mb_dist_gather_json(mine, 1, &err);
    assert_int_equal(cJSON_GetArraySize(all), 1);
    assert_string_equal(cJSON_GetArrayItem(all, 0)->valuestring, "x");
    cJSON_Delete(all);
    cJSON_Delete(mine);
    cJSON *ctx = cJSON_CreateObject();
    mb_dist_context_add(ctx);
    assert_int_equal((int)num(cJSON_GetObjectItem(ctx, "dist"), "size"), 1);
    cJSON_Delete(ctx);
    mb_dist_finalize();
}

#ifdef MB_TEST_NCCL_MODULE
/* GPUs on this machine, from the device nodes the driver makes (/dev/nvidia0,
 * /dev/nvidia1, ...; a container sees only its own): a fact that needs no
 * CUDA call, to check the NCCL probe's verdict against. */
static int gpu_device_nodes(void)
{
    int n = 0;
    for (int i = 0; i < 64; i++) {
        char path[32];
        snprintf(path, sizeof path, "/dev/nvidia%d", i);
        n += access(path, F_OK) == 0;
    }
    return n;
}
#endif

static bool starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

static void expect_prefix(const char *text, const char *prefix)
{
    if (!starts_with(text, prefix))
        fail_msg("'%s' does not start with '%s'", text, prefix);
}

/* Without ranks the MPI backends skip for the one documented reason: how to
 * start them (built with MPI) or that MPI was not found at build time. The
 * same backends with one rank under mpirun must run and verify: dist_mpi
 * (mpi_coll_check coll, mpirun -np 1) asserts that. */
static void test_mpi_probe_alone(void **s)
{
    (void)s;
    const mb_component_ops *const tables[] = {
        mb_registry_find_builtin("allreduce", "mpi"), mb_registry_find_builtin("allgather", "mpi"),
        mb_registry_find_builtin("reducescatter", "mpi"), mb_registry_find_builtin("broadcast", "mpi") };
#ifdef MB_HAVE_MPI
    const char *want = "needs MPI ranks: start with mpirun -np N or srun "
                       "(this process is not under an MPI launcher)";
#else
    const char *want = "not built in: MPI not found at build time";
#endif
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        mb_err why = { 0 };
        assert_non_null(tables[i]);
        assert_int_equal(tables[i]->probe(NULL, &why), MB_ESKIP);
        assert_string_equal(why.msg, want);
        assert_true(tables[i]->collective);
        assert_string_equal(tables[i]->work_unit, "byte");
#ifdef MB_HAVE_MPI
        assert_non_null(tables[i]->setup); /* the real table, not a placeholder */
        assert_false(tables[i]->params_unknown);
#endif
    }
}

/* The NCCL backend's verdict is what this machine must give: with the module
 * built it loads (a placeholder saying "cannot load" fails), then skips for
 * no GPU or one GPU with that reason, and runs with two or more. Without the
 * module: the "not built in" placeholder. */
static void test_nccl_probe_alone(void **s)
{
    (void)s;
    /* NCCL is a loadable module: reach it (or its placeholder) by the registry. */
    const mb_component_ops *nccl = mb_registry_find("allreduce", "nccl");
    assert_non_null(nccl);
    assert_true(nccl->collective);
    mb_err why = { 0 };
    int rc = nccl->probe(NULL, &why);
#ifdef MB_TEST_NCCL_MODULE
    if (nccl->params_unknown)
        fail_msg("the NCCL module was built but did not load: %s", why.msg);
    int gpus = gpu_device_nodes();
    /* CUDA_VISIBLE_DEVICES may hide some: then only the documented texts. */
    bool hidden = getenv("CUDA_VISIBLE_DEVICES") != NULL;
    if (gpus == 0) {
        assert_int_equal(rc, MB_ESKIP);
        expect_prefix(why.msg, "no usable CUDA device: cudaGetDeviceCount: ");
    } else if (gpus == 1 && !hidden) {
        assert_int_equal(rc, MB_ESKIP);
        expect_prefix(why.msg, "fewer than two GPUs in total (1 visible, one process)");
    } else if (!hidden) {
        if (rc != MB_OK)
            fail_msg("%d GPUs, but the NCCL probe skips: %s", gpus, why.msg);
    } else if (rc != MB_OK && !starts_with(why.msg, "no usable CUDA device: ")) {
        expect_prefix(why.msg, "fewer than two GPUs in total (");
    }
#else
    assert_int_equal(rc, MB_ESKIP);
    expect_prefix(why.msg, "not built in: ");
    assert_non_null(strstr(why.msg, "NCCL"));
    assert_true(nccl->params_unknown);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busbw_known_answers),
        cmocka_unit_test(test_work_factor_known_answers),
        cmocka_unit_test(test_report_one_rank),
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_pattern_exact_every_dtype),
        cmocka_unit_test(test_other_collectives),
        cmocka_unit_test(test_nic_speeds),
        cmocka_unit_test(test_fleet_merge),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_world_of_one),
        cmocka_unit_test(test_mpi_probe_alone),
        cmocka_unit_test(test_nccl_probe_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
