/* test_gap.c: the gap model on hand-made files (tests/data/gap_*.json),
 * every expected figure computed by hand below, not copied from output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analysis.h"
#include "gap_page.h"
#include "gap_writers.h"
#include "context.h"
#include "diagnose.h"
#include "formulas.h"
#include "gap.h"
#include "gap_test_util.h"
#include "run_read.h"
#include "suite.h"
#include "text_test_util.h"
#include "hardware.h"

/* ---- fixtures ------------------------------------------------------------------ */

typedef struct fx {
    mb_ini matching, thresholds, remedies;
    mb_ceilings here, there;
    mb_run run;
    mb_gap gap;
    mb_diagnosis diag;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    mb_err err = { 0 };
    mb_run_init(&f->run);
    if (mb_ini_load_gap("matching.ini", &f->matching, &err) || mb_ini_load_gap("thresholds.ini", &f->thresholds, &err) ||
        mb_ini_load_gap("remedies.ini", &f->remedies, &err) ||
        mb_ceilings_load(data_path("gap_here.json"), &f->here, &err) ||
        mb_ceilings_load(data_path("gap_there.json"), &f->there, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return -1;
    }
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    mb_diagnosis_free(&f->diag);
    mb_gap_free(&f->gap);
    mb_run_free(&f->run);
    mb_ceilings_free(&f->here);
    mb_ceilings_free(&f->there);
    mb_ini_free(&f->matching);
    mb_ini_free(&f->thresholds);
    mb_ini_free(&f->remedies);
    free(f);
    return 0;
}

static void build(fx *f, const char *run_path)
{
    mb_err err = { 0 };
    mb_diagnosis_free(&f->diag);
    mb_gap_free(&f->gap);
    mb_run_free(&f->run);
    int rc = mb_run_read(run_path, &f->run, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, MB_OK);
    rc = mb_gap_build(&f->run, &f->here, &f->matching, &f->gap, &err);
    assert_int_equal(rc, MB_OK);
    rc = mb_diagnose(&f->gap, &f->thresholds, &f->remedies, &f->diag, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, MB_OK);
}

static const mb_gap_stage *stage(const mb_gap *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->stages[i].stage->name, name) == 0)
            return &g->stages[i];
    fail_msg("no stage %s", name);
    return NULL;
}

static const char *matched_id(const fx *f, const mb_gap_stage *st)
{
    return st->match >= 0 ? f->here.cases[st->match].id : "(none)";
}

/* ---- the gap of tests/data/gap_run.json ------------------------------------------- */

/* The run: 100 steps, 300 s in all, stages summing to 270 s.
 *   dataloading  disk random 128 KiB  2.6e10 B  in 85 s
 *   h2d          copy h2d pageable    2e11 B    in 40 s
 *   forward      gemm bf16            1.2e16 FLOP in 40 s (1.2e12 per call)
 *   backward     gemm bf16            2.4e14 FLOP and 0.6 s per step
 *   launch       5e6 launches in 30 s
 *   sync         2e4 syncs in 5 s
 *   optimizer    other, 10 s
 * Ceilings (gap_here.json, rate x rate_scale):
 *   disk io_uring 128k direct random: 2000 MB/s = 2e9 B/s (cached 12000 MB/s
 *   and 4k 800 MB/s must not win); copy h2d pageable 10 GB/s; gemm bf16
 *   8192^3 600 TFLOP/s (1024^3 is 300, fp8 failed, tf32 unverified);
 *   launch op=launch 250000/s; launch op=stream_sync 100000/s. */
static void check_known_gap(fx *f)
{
    const mb_gap *g = &f->gap;
    assert_int_equal(g->n, 7);
    assert_int_equal(g->steps, 100);
    CLOSE(g->total, 300);
    CLOSE(g->stage_sum, 85 + 40 + 40 + 60 + 30 + 5 + 10);
    CLOSE(g->unaccounted, 300 - 270);

    const mb_gap_stage *d = stage(g, "dataloading");
    assert_string_equal(matched_id(f, d), "disk/io_uring/block_size=131072,mode=direct,pattern=random,qd=32");
    CLOSE(d->measured_rate, 2.6e10 / 85);
    CLOSE(d->ceiling_rate, 2000 * 1e6);
    CLOSE(d->efficiency, (2.6e10 / 85) / 2e9);
    CLOSE(d->time_at_ceiling, 2.6e10 / 2e9); /* 13 s */
    CLOSE(d->time_lost, 85 - 13);
    CLOSE(d->share, 85.0 / 300);
    CLOSE(d->amdahl_total, 300 - 85 + 13);
    CLOSE(d->amdahl_speedup, 300.0 / 228);

    const mb_gap_stage *h = stage(g, "h2d");
    assert_string_equal(matched_id(f, h), "copy/cuda/direction=h2d,memory=pageable,size=67108864");
    CLOSE(h->efficiency, (2e11 / 40) / 10e9);
    CLOSE(h->time_lost, 40 - 2e11 / 10e9);

    const mb_gap_stage *fw = stage(g, "forward");
    assert_string_equal(matched_id(f, fw), "gemm/cublaslt/dtype=bf16,k=8192,m=8192,n=8192");
    CLOSE(fw->measured_rate, 1.2e16 / 40);
    CLOSE(fw->efficiency, 3e14 / 600e12);
    CLOSE(fw->time_at_ceiling, 1.2e16 / 600e12);

    const mb_gap_stage *bw = stage(g, "backward");
    assert_string_equal(bw->stage->dtype, "bf16"); /* "bfloat16" in the file */
    CLOSE(bw->stage->seconds, 0.6 * 100);
    CLOSE(bw->stage->work, 2.4e14 * 100);
    CLOSE(bw->efficiency, (2.4e16 / 60) / 600e12);
    CLOSE(bw->time_lost, 60 - 2.4e16 / 600e12);

    const mb_gap_stage *l = stage(g, "launch");
    assert_string_equal(matched_id(f, l), "launch/cuda/count=1000,op=launch");
    CLOSE(l->time_at_ceiling, 5e6 / 250000.0);
    CLOSE(l->time_lost, 30 - 20);

    const mb_gap_stage *s = stage(g, "sync");
    assert_string_equal(matched_id(f, s), "launch/cuda/count=1000,op=stream_sync");
    CLOSE(s->time_at_ceiling, 2e4 / 100000.0);
    CLOSE(s->time_lost, 5 - 0.2);

    const mb_gap_stage *o = stage(g, "optimizer");
    assert_int_equal(o->match, -1);
    assert_non_null(strstr(o->why, "no ceiling"));
    CLOSE(o->time_lost, 0);
    CLOSE(o->share, 10.0 / 300);

    /* ranking: 72, then the three 20 s (file order on a tie), 10, 4.8 */
    const char *order[] = { "dataloading", "h2d", "forward", "backward", "launch", "sync", "optimizer" };
    for (int k = 0; k < 7; k++)
        assert_string_equal(g->stages[g->ranking[k]].stage->name, order[k]);
    CLOSE(g->all_total, 300 - (72 + 20 + 20 + 20 + 10 + 4.8));
    CLOSE(g->all_speedup, 300 / 153.2);
    assert_string_equal(g->stages[g->bottleneck].stage->name, "dataloading");
    CLOSE(mb_gap_per_step(g, g->total), 3.0);
}

static void test_known_answers_json(void **state)
{
    fx *f = *state;
    build(f, data_path("gap_run.json"));
    check_known_gap(f);
}

static void test_known_answers_csv(void **state)
{
    fx *f = *state;
    build(f, data_path("gap_run.csv")); /* the same run written as CSV */
    check_known_gap(f);
}

static void test_match_reasons(void **state)
{
    fx *f = *state;
    build(f, data_path("gap_run.json"));
    const mb_gap_stage *d = stage(&f->gap, "dataloading");
    assert_non_null(strstr(d->why, "pattern random"));
    assert_non_null(strstr(d->why, "128 KiB per call as the stage"));
    const mb_gap_stage *fw = stage(&f->gap, "forward");
    assert_non_null(strstr(fw->why, "dtype bf16"));
    /* 2 usable bf16 GPU cases: fp8 failed and tf32 not verified are no ceilings */
    assert_non_null(strstr(fw->why, "nearest of 2 usable gemm"));
}

/* ---- projection ----------------------------------------------------------------------- */

static void test_project_results(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    build(f, data_path("gap_run.json"));
    assert_int_equal(mb_gap_project_results(&f->gap, &f->there, &f->matching, &err), MB_OK);
    const mb_gap *g = &f->gap;
    /* time there = time here x ceiling here / ceiling there */
    CLOSE(stage(g, "dataloading")->target_seconds, 85 * 2000.0 / 8000);
    CLOSE(stage(g, "h2d")->target_seconds, 40 * 10.0 / 20);
    CLOSE(stage(g, "forward")->target_seconds, 40 * 600.0 / 1200);
    CLOSE(stage(g, "backward")->target_seconds, 60 * 600.0 / 1200);
    CLOSE(stage(g, "launch")->target_seconds, 30 * 250000.0 / 500000);
    /* no stream_sync case there, no ceiling for 'other': both keep their time */
    assert_false(stage(g, "sync")->projected);
    CLOSE(stage(g, "sync")->target_seconds, 5);
    assert_non_null(strstr(stage(g, "sync")->target_why, "kept its time"));
    CLOSE(stage(g, "optimizer")->target_seconds, 10);
    double total = 21.25 + 20 + 20 + 30 + 15 + 5 + 10 + 30; /* + 30 s in no stage */
    CLOSE(g->target_total, total);
    assert_string_equal(g->stages[g->target_bottleneck].stage->name, "backward");
    assert_string_equal(g->target_kind, "results");
    assert_string_equal(g->target_label, "Test GPU @ there"); /* one GPU model on both: the host tells them apart */
    assert_true(g->n_assumptions >= 2);
}

static void test_project_datasheet(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_datasheet *d = NULL;
    build(f, data_path("gap_run.json"));
    assert_int_equal(mb_datasheet_load(data_path("gap_gpu.ini"), &d, &err), MB_OK);
    assert_int_equal(mb_gap_project_datasheet(&f->gap, d, true, &err), MB_OK);
    const mb_gap *g = &f->gap;
    /* time there = work / (peak there x ceiling here / peak here x efficiency)
     *            = time here x peak here / peak there                          */
    CLOSE(stage(g, "forward")->target_seconds, 40 * 989.4 / 1978.8);
    CLOSE(stage(g, "backward")->target_seconds, 60 * 989.4 / 1978.8);
    CLOSE(stage(g, "forward")->target_rate, 1978.8e12 * 600 / 989.4);
    /* the case's peak is PCIe 4.0 x16; the datasheet says PCIe 5.0 x16 */
    double pcie4 = 16.0 * 128 / 130 * 16 / 8;
    CLOSE(stage(g, "h2d")->target_seconds, 40 * pcie4 / mb_pcie_gbps(5, 16));
    /* a GPU datasheet says nothing about disks, launches or syncs */
    CLOSE(stage(g, "dataloading")->target_seconds, 85);
    assert_non_null(strstr(stage(g, "dataloading")->target_why, "kept its time"));
    CLOSE(stage(g, "launch")->target_seconds, 30);
    CLOSE(stage(g, "sync")->target_seconds, 5);
    CLOSE(g->target_total, 85 + 20 + 20 + 30 + 30 + 5 + 10 + 30);
    assert_string_equal(g->stages[g->target_bottleneck].stage->name, "dataloading");
    mb_datasheet_free(d);
}

/* ---- no ceiling, devices, collectives ---------------------------------------------------- */

static const char *cpu_only_results(void)
{
    return scratch_file("cpu_only.json",
                        "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
                        "\"context\":{\"host\":{\"name\":\"cpubox\"},\"gpus\":[]},\"cases\":[{"
                        "\"id\":\"gemm/openblas/dtype=fp32,k=1024,m=1024,n=1024\",\"component\":\"gemm\","
                        "\"backend\":\"openblas\",\"params\":{\"dtype\":\"fp32\",\"m\":\"1024\",\"n\":\"1024\","
                        "\"k\":\"1024\"},\"status\":\"ok\",\"work_unit\":\"flop\",\"work_per_iteration\":2147483648,"
                        "\"rate_unit\":\"GFLOP/s\",\"rate_scale\":1e9,\"rate\":{\"median\":1500},"
                        "\"verification\":{\"status\":\"passed\"}}]}");
}

static void test_gpu_stage_on_cpu_results(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_ceilings cpu;
    assert_int_equal(mb_ceilings_load(cpu_only_results(), &cpu, &err), MB_OK);
    const char *run = scratch_file("gpu_and_cpu.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"gpu_mm\",\"component\":\"gemm\",\"dtype\":\"fp32\",\"flops\":1e15,\"seconds\":6},"
                                   "{\"name\":\"cpu_mm\",\"component\":\"gemm\",\"device\":\"cpu\",\"dtype\":\"fp32\","
                                   "\"flops\":3e12,\"seconds\":4}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &cpu, &f->matching, &g, &err), MB_OK);
    assert_int_equal(g.stages[0].match, -1);
    assert_non_null(strstr(g.stages[0].why, "no ceiling"));
    /* the ceilings hold no GPU case: one warning naming the GPU stages, not
     * the reason repeated per stage */
    assert_true(g.no_gpu_ceilings);
    assert_non_null(strstr(g.stages[0].why, "no usable GPU case"));
    assert_int_equal(g.n_notes, 1);
    assert_non_null(strstr(g.notes[0], "hold no usable GPU case (no GPU case was measured)"));
    assert_non_null(strstr(g.notes[0], "(gpu_mm)"));
    CLOSE(g.total, 10); /* still counts */
    CLOSE(g.stages[0].share, 0.6);
    assert_int_equal(g.stages[1].match, 0);
    CLOSE(g.stages[1].efficiency, (3e12 / 4) / 1500e9);
    CLOSE(g.all_total, 10 - (4 - 3e12 / 1500e9));
    mb_gap_free(&g);
    mb_run_free(&r);
    mb_ceilings_free(&cpu);
}

/* One CPU GEMM case as a results-file entry. */
static void cpu_gemm_case(char *buf, size_t len, const char *backend, int n, int threads, double gflops,
                          const char *verified)
{
    snprintf(buf, len,
             "{\"id\":\"gemm/%s/dtype=fp32,k=%d,m=%d,n=%d,threads=%d\",\"component\":\"gemm\","
             "\"backend\":\"%s\",\"params\":{\"dtype\":\"fp32\",\"m\":\"%d\",\"n\":\"%d\",\"k\":\"%d\","
             "\"threads\":\"%d\"},\"status\":\"ok\",\"work_unit\":\"flop\",\"work_per_iteration\":%.0f,"
             "\"rate_unit\":\"GFLOP/s\",\"rate_scale\":1e9,\"rate\":{\"median\":%g},"
             "\"verification\":{\"status\":\"%s\"}}",
             backend, n, n, n, threads, backend, n, n, n, threads, 2.0 * n * n * n, gflops, verified);
}

static const char *cpu_gemm_results(const char *name, const char *onednn_verified)
{
    char c[5][700], text[4096];
    cpu_gemm_case(c[0], sizeof c[0], "openblas", 2048, 0, 190, "passed");
    cpu_gemm_case(c[1], sizeof c[1], "onednn", 2048, 0, 380, onednn_verified);
    cpu_gemm_case(c[2], sizeof c[2], "onednn", 2048, 1, 100, "passed");
    cpu_gemm_case(c[3], sizeof c[3], "openblas", 1024, 0, 150, "passed");
    cpu_gemm_case(c[4], sizeof c[4], "onednn", 4096, 0, 900, "failed"); /* fast and wrong: never a ceiling */
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"cpubox\"},\"gpus\":[]},\"cases\":[%s,%s,%s,%s,%s]}",
             c[0], c[1], c[2], c[3], c[4]);
    return scratch_file(name, text);
}

/* A CPU GEMM stage takes the best verified CPU GEMM case of its shape,
 * whichever library measured it: oneDNN at 380 GFLOP/s over OpenBLAS at
 * 190 on the same 2048^3 fp32, all cores over one; a faster case that
 * failed verification never. */
static void test_cpu_gemm_best_library(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_stage s = { .name = "cpu_mm", .component = "gemm", .device = "cpu", .dtype = "fp32",
                   .work = 2.0 * 2048 * 2048 * 2048 * 10, .count = 10, .work_unit = "flop", .seconds = 1 };
    char why[MB_GAP_WHY_LEN];
    mb_ceilings r;
    assert_int_equal(mb_ceilings_load(cpu_gemm_results("cpu_gemm_both.json", "passed"), &r, &err), MB_OK);
    int k = mb_gap_match(&s, &r, &f->matching, why, sizeof why);
    assert_true(k >= 0);
    assert_string_equal(r.cases[k].id, "gemm/onednn/dtype=fp32,k=2048,m=2048,n=2048,threads=0");
    assert_non_null(strstr(why, "the fastest of 3 equally near (openblas, onednn)"));
    CLOSE(mb_gap_case_rate(&s, &r.cases[k], &f->matching), 380e9);
    mb_ceilings_free(&r);
    /* oneDNN's all-core case failed verification: OpenBLAS's is the ceiling. */
    assert_int_equal(mb_ceilings_load(cpu_gemm_results("cpu_gemm_bad_onednn.json", "failed"), &r, &err), MB_OK);
    k = mb_gap_match(&s, &r, &f->matching, why, sizeof why);
    assert_true(k >= 0);
    assert_string_equal(r.cases[k].id, "gemm/openblas/dtype=fp32,k=2048,m=2048,n=2048,threads=0");
    assert_non_null(strstr(why, "the fastest of 2 equally near (openblas, onednn)"));
    /* A stage of 4096^3 has only the unverified oneDNN case at its size: the nearest verified one serves. */
    s.work = 2.0 * 4096 * 4096 * 4096 * 10;
    k = mb_gap_match(&s, &r, &f->matching, why, sizeof why);
    assert_string_equal(r.cases[k].id, "gemm/openblas/dtype=fp32,k=2048,m=2048,n=2048,threads=0");
    mb_ceilings_free(&r);
}

/* Two io_uring random-read cases, SQPOLL off and on, at the given MB/s and
 * repetitions' cv (max_cv 0.1: noisy above it), as a results file; and the
 * disk stage they are equally near. */
static int sqpoll_match(fx *f, const char *name, const double rate[2], const double cv[2], mb_ceilings *r,
                        char *why, size_t len)
{
    mb_err err = { 0 };
    char c[2][800], text[2048];
    for (int on = 0; on < 2; on++)
        snprintf(c[on], sizeof c[on],
                 "{\"id\":\"disk/io_uring/block_size=4096,mode=direct,pattern=random,qd=32,sqpoll=%s\","
                 "\"component\":\"disk\",\"backend\":\"io_uring\",\"params\":{\"block_size\":\"4096\","
                 "\"mode\":\"direct\",\"pattern\":\"random\",\"qd\":\"32\",\"sqpoll\":\"%s\"},"
                 "\"status\":\"ok\",\"work_unit\":\"byte\",\"rate_unit\":\"MB/s\",\"rate_scale\":1e6,"
                 "\"repetitions\":5,\"max_cv\":0.1,\"rate\":{\"median\":%g,\"cv\":%g},"
                 "\"verification\":{\"status\":\"passed\"}}",
                 on ? "on" : "off", on ? "on" : "off", rate[on], cv[on]);
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"box\"},\"gpus\":[]},\"cases\":[%s,%s]}",
             c[0], c[1]);
    assert_int_equal(mb_ceilings_load(scratch_file(name, text), r, &err), MB_OK);
    mb_stage s = { .name = "reads", .component = "disk", .pattern = "random", .work = 1e9, .count = 244140,
                   .work_unit = "byte", .seconds = 10, .block_size = 4096 };
    int k = mb_gap_match(&s, r, &f->matching, why, len);
    assert_true(k >= 0);
    CLOSE(mb_gap_case_rate(&s, &r->cases[k], &f->matching), r->cases[k].rate_abs);
    return k;
}

/* The suites run io_uring with and without SQPOLL (configs/suites/all.ini):
 * a disk stage takes the faster of the two, whichever it is. */
static void test_disk_sqpoll_faster_wins(void **state)
{
    const double rates[2][2] = { { 300, 420 }, { 450, 380 } }, cv[2] = { 0.01, 0.01 }; /* MB/s: off, on */
    for (int t = 0; t < 2; t++) {
        mb_ceilings r;
        char why[MB_GAP_WHY_LEN];
        int k = sqpoll_match(*state, "disk_sqpoll.json", rates[t], cv, &r, why, sizeof why);
        assert_string_equal(mb_case_param(&r.cases[k], "sqpoll"), t == 0 ? "on" : "off");
        CLOSE(r.cases[k].rate_abs, (t == 0 ? 420 : 450) * 1e6);
        assert_non_null(strstr(why, "the fastest of 2 equally near"));
        mb_ceilings_free(&r);
    }
}

/* Among cases equally near a stage, one not noisy beats a faster noisy one
 * (noise lifted the fastest of noisy cases most: this VM's 3x3 conv at 255
 * GFLOP/s, above its CPU's peak, beat a clean 235); with all of them noisy,
 * the fastest still serves, said noisy. */
static void test_tie_prefers_a_case_not_noisy(void **state)
{
    const double rate[2] = { 380, 420 }, cv[2][2] = { { 0.01, 0.30 }, { 0.25, 0.30 } }; /* off, on */
    for (int t = 0; t < 2; t++) {
        mb_ceilings r;
        char why[MB_GAP_WHY_LEN];
        int k = sqpoll_match(*state, "disk_noisy_tie.json", rate, cv[t], &r, why, sizeof why);
        if (t == 0) { /* the clean 380 MB/s, not the noisy 420 */
            assert_string_equal(mb_case_param(&r.cases[k], "sqpoll"), "off");
            assert_false(r.cases[k].noisy);
            assert_non_null(strstr(why, "the fastest of 1 equally near (io_uring) that are not noisy (1 noisy, "
                                        "left aside)"));
        } else { /* both noisy: the fastest, said noisy */
            assert_string_equal(mb_case_param(&r.cases[k], "sqpoll"), "on");
            assert_non_null(strstr(why, "the fastest of 2 equally near"));
            assert_non_null(strstr(why, "noisy"));
        }
        mb_ceilings_free(&r);
    }
}

static void test_collective_busbw(void **state)
{
    fx *f = *state;
    /* The NCCL case reports bus bandwidth 200 GB/s (busbw_factor 1.75 at 8
     * ranks). A stage moving 6.4e10 B in 1 s at 8 ranks has algbw 64 GB/s,
     * busbw 64 x 1.75 = 112 GB/s: efficiency 112 / 200. At 4 ranks the
     * factor is 2*3/4 = 1.5. */
    mb_stage s = { .name = "grads", .component = "allreduce", .dtype = "bf16", .ranks = 8, .work = 6.4e10,
                   .work_unit = "byte", .seconds = 1.0, .count = 1000 };
    char why[MB_GAP_WHY_LEN];
    int k = mb_gap_match(&s, &f->here, &f->matching, why, sizeof why);
    assert_true(k >= 0);
    assert_string_equal(f->here.cases[k].backend, "nccl");
    assert_non_null(strstr(why, "8 ranks"));
    double ceil = mb_gap_case_rate(&s, &f->here.cases[k], &f->matching);
    CLOSE(ceil, 200e9 / 1.75);
    CLOSE(mb_efficiency(6.4e10 / 1.0, ceil), 6.4e10 * 1.75 / 200e9);
    s.ranks = 4;
    CLOSE(mb_gap_case_rate(&s, &f->here.cases[k], &f->matching), 200e9 / 1.5);
    assert_int_equal(mb_gap_match(&s, &f->here, &f->matching, why, sizeof why), k);
    assert_non_null(strstr(why, "4 ranks not measured, case has 8"));
}

static void test_nearest_size_and_dtype(void **state)
{
    fx *f = *state;
    char why[MB_GAP_WHY_LEN];
    /* 2e9 FLOP per call is nearest the 1024^3 case (2^31 FLOP) */
    mb_stage s = { .name = "small", .component = "gemm", .dtype = "bf16", .work = 2e12, .count = 1000,
                   .work_unit = "flop", .seconds = 10 };
    int k = mb_gap_match(&s, &f->here, &f->matching, why, sizeof why);
    assert_string_equal(f->here.cases[k].id, "gemm/cublaslt/dtype=bf16,k=1024,m=1024,n=1024");
    /* fp16 was not measured: bf16 (same speed class) is the nearest, and why says so */
    s.dtype = "fp16";
    k = mb_gap_match(&s, &f->here, &f->matching, why, sizeof why);
    assert_true(k >= 0);
    assert_non_null(strstr(why, "dtype fp16 not measured, nearest bf16"));
    /* a pinned h2d copy picks the pinned case, a d2h copy the d2h case */
    mb_stage c = { .name = "c", .component = "copy", .direction = "h2d", .memory = "pinned", .work = 1e10,
                   .work_unit = "byte", .seconds = 1 };
    k = mb_gap_match(&c, &f->here, &f->matching, why, sizeof why);
    assert_string_equal(f->here.cases[k].id, "copy/cuda/direction=h2d,memory=pinned,size=67108864");
    c.direction = "d2d";
    assert_int_equal(mb_gap_match(&c, &f->here, &f->matching, why, sizeof why), -1);
    assert_non_null(strstr(why, "no copy case with direction d2d"));
    /* sequential disk reads use the sequential case */
    mb_stage d = { .name = "d", .component = "disk", .pattern = "sequential", .work = 1e10, .work_unit = "byte",
                   .seconds = 10, .block_size = 1 << 20 };
    k = mb_gap_match(&d, &f->here, &f->matching, why, sizeof why);
    assert_string_equal(f->here.cases[k].id, "disk/io_uring/block_size=1048576,mode=direct,pattern=sequential,qd=32");
}

/* A GPU GEMM case times many products per iteration (245 of 1024^3, 11 of
 * 4096^3, its metric gemms_per_iteration): a stage's call is held to one
 * product, not to the iteration. A 32.8 GFLOP call (Qwen1.5's MLP GEMMs) is
 * nearer one 4096^3 product (137 GFLOP) than one 1024^3 (2.15 GFLOP); by
 * the iterations (526 and 1512 GFLOP) it read as nearer the 1024^3 case. */
static void test_nearest_size_per_call(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    char c[2][900], text[2048];
    const int n[2] = { 1024, 4096 }, per_iter[2] = { 245, 11 };
    for (int i = 0; i < 2; i++)
        snprintf(c[i], sizeof c[i],
                 "{\"id\":\"gemm/cublaslt/dtype=bf16,shape=%dx%dx%d\",\"component\":\"gemm\","
                 "\"backend\":\"cublaslt\",\"params\":{\"dtype\":\"bf16\",\"shape\":\"%dx%dx%d\"},"
                 "\"status\":\"ok\",\"work_unit\":\"flop\",\"work_per_iteration\":%.0f,"
                 "\"rate_unit\":\"TFLOP/s\",\"rate_scale\":1e12,\"rate\":{\"median\":%d},"
                 "\"metrics\":{\"gemms_per_iteration\":{\"value\":%d,\"unit\":\"\"}},"
                 "\"verification\":{\"status\":\"passed\"}}",
                 n[i], n[i], n[i], n[i], n[i], n[i], 2.0 * n[i] * n[i] * n[i] * per_iter[i], i ? 746 : 196,
                 per_iter[i]);
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"h100\"},\"gpus\":[{\"name\":\"H100\"}]},\"cases\":[%s,%s]}",
             c[0], c[1]);
    mb_ceilings res;
    assert_int_equal(mb_ceilings_load(scratch_file("per_call.json", text), &res, &err), MB_OK);
    char why[MB_GAP_WHY_LEN];
    mb_stage s = { .name = "mlp", .component = "gemm", .dtype = "bf16", .work = 168 * 32.8e9, .count = 168,
                   .work_unit = "flop", .seconds = 8.85e-3 };
    int k = mb_gap_match(&s, &res, &f->matching, why, sizeof why);
    assert_true(k >= 0);
    assert_string_equal(res.cases[k].id, "gemm/cublaslt/dtype=bf16,shape=4096x4096x4096");
    assert_non_null(strstr(why, "137 GFLOP per call, the stage's 32.8 GFLOP"));
    /* a call of 2 GFLOP is still the 1024^3 product's size */
    s.work = 168 * 2e9;
    k = mb_gap_match(&s, &res, &f->matching, why, sizeof why);
    assert_string_equal(res.cases[k].id, "gemm/cublaslt/dtype=bf16,shape=1024x1024x1024");
    assert_non_null(strstr(why, "2.15 GFLOP per call"));
    mb_ceilings_free(&res);
}

/* Results with two pinned d2h copy cases: 4 KiB at `small` GB/s and 1 MiB at
 * `large` GB/s. */
static const char *copy_results(const char *name, double small, double large)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"h\"},\"gpus\":[{\"name\":\"H100\"}]},\"cases\":["
             "{\"id\":\"copy/cuda/direction=d2h,memory=pinned,size=4096\",\"component\":\"copy\",\"backend\":\"cuda\","
             "\"params\":{\"direction\":\"d2h\",\"memory\":\"pinned\",\"size\":\"4096\"},\"status\":\"ok\","
             "\"work_unit\":\"byte\",\"work_per_iteration\":409600,\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,"
             "\"rate\":{\"median\":%g},\"verification\":{\"status\":\"passed\"}},"
             "{\"id\":\"copy/cuda/direction=d2h,memory=pinned,size=1048576\",\"component\":\"copy\",\"backend\":\"cuda\","
             "\"params\":{\"direction\":\"d2h\",\"memory\":\"pinned\",\"size\":\"1048576\"},\"status\":\"ok\","
             "\"work_unit\":\"byte\",\"work_per_iteration\":1048576,\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,"
             "\"rate\":{\"median\":%g},\"verification\":{\"status\":\"passed\"}}]}",
             small, large);
    return scratch_file(name, text);
}

/* A copy's calls smaller than every measured size pay the fixed cost the
 * smallest case shows, not that case's rate over fewer bytes (a 4-byte
 * .item() read "at 0.02% of its ceiling"). 4 KiB at 2 GB/s takes 2.048 us,
 * of which 4096 B at the best 50 GB/s are 81.92 ns: a fixed 1.96608 us. 100
 * copies of 4 B in 400 us: held to 100 x (1.96608 us + 4 B / 50 GB/s) =
 * 196.616 us (49.154%), not 4 B / 2 GB/s each (0.0005%). Onto a machine
 * twice as fast at both sizes: 400 us x 98.308 / 196.616 = 200 us. */
static void test_copy_fixed_cost(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_ceilings here, there;
    assert_int_equal(mb_ceilings_load(copy_results("copy_here.json", 2, 50), &here, &err), MB_OK);
    assert_int_equal(mb_ceilings_load(copy_results("copy_there.json", 4, 100), &there, &err), MB_OK);
    const char *run = scratch_file("small_copies.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"item\",\"component\":\"copy\",\"direction\":\"d2h\",\"memory\":\"pinned\","
                                   "\"bytes\":400,\"calls\":100,\"seconds\":400e-6},"
                                   "{\"name\":\"big\",\"component\":\"copy\",\"direction\":\"d2h\",\"memory\":\"pinned\","
                                   "\"bytes\":1e9,\"calls\":500,\"seconds\":0.04}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &here, &f->matching, &g, &err), MB_OK);
    CLOSE(g.stages[0].time_at_ceiling, 196.616e-6);
    CLOSE(g.stages[0].efficiency, 196.616 / 400);
    CLOSE(g.stages[0].time_lost, (400 - 196.616) * 1e-6);
    assert_non_null(strstr(g.stages[0].why, "calls smaller than the smallest measured (4 KiB): held to its fixed "
                                            "cost per call (1.97 µs"));
    /* 2 MB calls: larger than the 1 MiB case, held to its rate as before */
    CLOSE(g.stages[1].ceiling_rate, 50e9);
    assert_null(strstr(g.stages[1].why, "fixed cost"));
    assert_int_equal(mb_gap_project_results(&g, &there, &f->matching, &err), MB_OK);
    CLOSE(g.stages[0].target_seconds, 400e-6 * 98.308 / 196.616);
    CLOSE(g.stages[1].target_seconds, 0.02);
    mb_gap_free(&g);
    mb_run_free(&r);
    mb_ceilings_free(&here);
    mb_ceilings_free(&there);
}

/* Results of conv cases: a 32-image fp16 one (when small > 0) and a
 * 256-image bf16 one, in TFLOP/s. */
static const char *conv_results(const char *name, double small, double large)
{
    char text[2048], one[640];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:"
                                 "00:00Z\",\"context\":{\"host\":{\"name\":\"h\"},\"gpus\":[{\"name\":\"H100\"}]},"
                                 "\"cases\":[");
    static const char *const n[2] = { "32", "256" };
    static const char *const dt[2] = { "fp16", "bf16" };
    double rate[2] = { small, large };
    const char *sep = "";
    for (int i = 0; i < 2; i++) {
        if (rate[i] <= 0)
            continue;
        snprintf(one, sizeof one,
                 "%s{\"id\":\"conv/cudnn/dtype=%s,n=%s\",\"component\":\"conv\",\"backend\":\"cudnn\","
                 "\"params\":{\"dtype\":\"%s\",\"n\":\"%s\"},\"status\":\"ok\",\"work_unit\":\"FLOP\","
                 "\"work_per_iteration\":1e12,\"rate_unit\":\"TFLOP/s\",\"rate_scale\":1e12,\"rate\":{\"median\":%g},"
                 "\"verification\":{\"status\":\"passed\"}}",
                 sep, dt[i], n[i], dt[i], n[i], rate[i]);
        at += (size_t)snprintf(text + at, sizeof text - at, "%s", one);
        sep = ",";
    }
    snprintf(text + at, sizeof text - at, "]}");
    return scratch_file(name, text);
}

/* A stage is projected like for like: by the case it is held to here,
 * measured there; else by the target's nearest case scaled by how that case
 * runs on both machines. An fp16 conv stage held here to the 32-image fp16
 * case (90 TFLOP/s); a target that measured only the 256-image bf16 one
 * (437, here 385): 90 x 437/385 there, not 437 (4.8x, an AMD trace's conv
 * projected onto an H200 read so). */
static void test_project_like_for_like(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_ceilings here, there, both, other;
    assert_int_equal(mb_ceilings_load(conv_results("conv_here.json", 90, 385), &here, &err), MB_OK);
    assert_int_equal(mb_ceilings_load(conv_results("conv_there.json", 0, 437), &there, &err), MB_OK);
    assert_int_equal(mb_ceilings_load(conv_results("conv_both.json", 99, 437), &both, &err), MB_OK);
    assert_int_equal(mb_ceilings_load(conv_results("conv_other.json", 0, 437), &other, &err), MB_OK);
    const char *run = scratch_file("conv_stage.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"conv\",\"component\":\"conv\",\"dtype\":\"fp16\",\"flops\":9e12,"
                                   "\"seconds\":0.2}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &here, &f->matching, &g, &err), MB_OK);
    CLOSE(g.stages[0].ceiling_rate, 90e12); /* 9e12 FLOP in 0.2 s: 45 TFLOP/s, 50% of it */
    assert_int_equal(mb_gap_project_results(&g, &there, &f->matching, &err), MB_OK);
    CLOSE(g.stages[0].target_rate, 90e12 * 437 / 385);
    CLOSE(g.stages[0].target_seconds, 9e12 / (90e12 * 437 / 385 * 0.5));
    assert_non_null(strstr(g.stages[0].target_why, "measured on both, runs 1.14x as fast there (437 against 385"));
    /* the target measured the very case: its figure, as is */
    assert_int_equal(mb_gap_project_results(&g, &both, &f->matching, &err), MB_OK);
    CLOSE(g.stages[0].target_rate, 99e12);
    assert_non_null(strstr(g.stages[0].target_why, "the case it is held to here, measured there"));
    mb_gap_free(&g);
    mb_run_free(&r);
    /* here without the 256-image case: no case measured on both, the target's nearest as is, and said so */
    mb_ceilings_free(&here);
    assert_int_equal(mb_ceilings_load(conv_results("conv_here_small.json", 90, 0), &here, &err), MB_OK);
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_gap_project_results(&g, &other, &f->matching, &err), MB_OK);
    CLOSE(g.stages[0].target_rate, 437e12);
    assert_non_null(strstr(g.stages[0].target_why, "not like for like: no case measured on both machines"));
    mb_gap_free(&g);
    mb_run_free(&r);
    mb_ceilings_free(&here);
    mb_ceilings_free(&there);
    mb_ceilings_free(&both);
    mb_ceilings_free(&other);
}

/* Between two measured sizes a copy is held to the nearest case's rate, not
 * to a fixed cost per call taken from a larger case: pageable copies slow
 * down as they grow (an H100: 14.8 GB/s at 1 MiB, 12.8 at 16, 7.3 at 256),
 * and 147-MiB calls nearest the 256-MiB case were held to an 18.6-ms "fixed
 * cost" from it. Below every pageable size, where the smallest tells no
 * fixed cost, the pinned copies' fixed cost bounds a pageable call. */
static void test_copy_between_sizes(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    char text[2048];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:"
                                 "00:00Z\",\"context\":{\"host\":{\"name\":\"h\"},\"gpus\":[{\"name\":\"H100\"}]},"
                                 "\"cases\":[");
    static const double size[3] = { 1048576, 16777216, 268435456 }, rate[3] = { 14.8, 12.8, 7.3 };
    for (int i = 0; i < 3; i++)
        at += (size_t)snprintf(text + at, sizeof text - at,
                               "%s{\"id\":\"copy/cuda/direction=h2d,memory=pageable,size=%.0f\",\"component\":\"copy\","
                               "\"backend\":\"cuda\",\"params\":{\"direction\":\"h2d\",\"memory\":\"pageable\","
                               "\"size\":\"%.0f\"},\"status\":\"ok\",\"work_unit\":\"byte\",\"work_per_iteration\":%.0f,"
                               "\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":%g},"
                               "\"verification\":{\"status\":\"passed\"}}",
                               i ? "," : "", size[i], size[i], size[i], rate[i]);
    /* pinned cases of the same direction: 4 KiB at 2 GB/s, 1 MiB at 50 */
    static const double pinned_size[2] = { 4096, 1048576 }, pinned_rate[2] = { 2, 50 };
    for (int i = 0; i < 2; i++)
        at += (size_t)snprintf(text + at, sizeof text - at,
                               ",{\"id\":\"copy/cuda/direction=h2d,memory=pinned,size=%.0f\",\"component\":\"copy\","
                               "\"backend\":\"cuda\",\"params\":{\"direction\":\"h2d\",\"memory\":\"pinned\","
                               "\"size\":\"%.0f\"},\"status\":\"ok\",\"work_unit\":\"byte\",\"work_per_iteration\":%.0f,"
                               "\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":%g},"
                               "\"verification\":{\"status\":\"passed\"}}",
                               pinned_size[i], pinned_size[i], pinned_size[i], pinned_rate[i]);
    snprintf(text + at, sizeof text - at, "]}");
    mb_ceilings here;
    assert_int_equal(mb_ceilings_load(scratch_file("pageable.json", text), &here, &err), MB_OK);
    /* 10 calls of 147 MiB in 0.3 s; 10 of 64 KiB in 10 ms; 10 of 4 B in 100 us */
    const char *run = scratch_file("pageable_run.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"big\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pageable\","
                                   "\"bytes\":1541406720,\"calls\":10,\"seconds\":0.3},"
                                   "{\"name\":\"small\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pageable\","
                                   "\"bytes\":655360,\"calls\":10,\"seconds\":0.01},"
                                   "{\"name\":\"tiny\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pageable\","
                                   "\"bytes\":40,\"calls\":10,\"seconds\":100e-6}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &here, &f->matching, &g, &err), MB_OK);
    CLOSE(g.stages[0].ceiling_rate, 7.3e9);
    assert_null(strstr(g.stages[0].why, "fixed cost"));
    /* below every size, the 1-MiB case moves its bytes faster than any: no fixed cost to tell, its rate (and
     * 64 KiB is no smaller than the smallest pinned case either) */
    CLOSE(g.stages[1].ceiling_rate, 14.8e9);
    /* 4 B calls: the pinned copies' fixed cost, 2.048 us - 4096 B / 50 GB/s = 1.96608 us, plus 4 B at 50 GB/s,
     * 10 times: 19.6616 us (an A10G's 2-byte pageable copies were held to 14.8 GB/s: "at 0.05%") */
    CLOSE(g.stages[2].time_at_ceiling, 19.6616e-6);
    CLOSE(g.stages[2].efficiency, 19.6616 / 100);
    assert_non_null(strstr(g.stages[2].why, "calls under any pageable case: held to the pinned copies' fixed cost "
                                            "per call, which a pageable copy never beats (1.97 µs"));
    mb_gap_free(&g);
    mb_run_free(&r);
    mb_ceilings_free(&here);
}

/* Results with a membw write case (256 MiB per call, 3000 GB/s) and, with
 * `graph`, a launch case of op graph at 1 M kernels/s. */
static const char *membw_results(const char *name, bool graph)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"h\"},\"gpus\":[{\"name\":\"H100\"}]},\"cases\":["
             "{\"id\":\"membw/cuda/op=write\",\"component\":\"membw\",\"backend\":\"cuda\","
             "\"params\":{\"op\":\"write\"},\"status\":\"ok\",\"work_unit\":\"byte\",\"work_per_iteration\":268435456,"
             "\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":3000},"
             "\"verification\":{\"status\":\"passed\"}}%s]}",
             graph ? ",{\"id\":\"launch/cuda/op=graph\",\"component\":\"launch\",\"backend\":\"cuda\","
                     "\"params\":{\"op\":\"graph\"},\"status\":\"ok\",\"work_unit\":\"launch\","
                     "\"work_per_iteration\":1000,\"rate_unit\":\"M launches/s\",\"rate_scale\":1e6,"
                     "\"rate\":{\"median\":1},\"verification\":{\"status\":\"passed\"}}"
                   : "");
    return scratch_file(name, text);
}

/* A memset is a GPU kernel: each call pays at least the GPU's least time per
 * kernel, which the launch case of op graph measures (empty kernels replayed
 * back to back), on top of its bytes at the bandwidth ceiling. 100 memsets
 * of 4 B in 200 us: held to 100 x 1 us + 400 B / 3 TB/s = 100.000133 us
 * (50.0%), not 400 B / 3 TB/s = 133 ps ("at 0.00007%": TraceLens's H100
 * Qwen1.5 memsets, the README's H200 trace). Without the graph case: as
 * before. */
static void test_membw_kernel_floor(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    const char *run = scratch_file("memsets.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"memset\",\"component\":\"membw\",\"op\":\"write\",\"bytes\":400,"
                                   "\"calls\":100,\"seconds\":200e-6}]}");
    for (int graph = 1; graph >= 0; graph--) {
        mb_ceilings res;
        assert_int_equal(mb_ceilings_load(membw_results(graph ? "membw_g.json" : "membw.json", graph), &res, &err),
                         MB_OK);
        mb_run r;
        mb_gap g;
        assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
        assert_int_equal(mb_gap_build(&r, &res, &f->matching, &g, &err), MB_OK);
        double at = graph ? 100e-6 + 400 / 3e12 : 400 / 3e12;
        CLOSE(g.stages[0].time_at_ceiling, at);
        CLOSE(g.stages[0].efficiency, at / 200e-6);
        CLOSE(g.stages[0].time_lost, 200e-6 - at);
        assert_true((strstr(g.stages[0].why, "each call also pays the GPU's least time per kernel (1 µs, "
                                             "launch/cuda op=graph") != NULL) == graph);
        mb_gap_free(&g);
        mb_run_free(&r);
        mb_ceilings_free(&res);
    }
}

/* A stage faster than its matched case loses no time (the case is not its
 * ceiling) and the output says so. */
static void test_above_ceiling(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    const char *run = scratch_file("above.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":2},\"stages\":["
                                   "{\"name\":\"fast\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pageable\","
                                   "\"bytes\":3e10,\"seconds\":1},{\"name\":\"rest\",\"component\":\"other\",\"seconds\":1}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_true(g.stages[0].above_ceiling);
    CLOSE(g.stages[0].efficiency, 3.0);
    CLOSE(g.stages[0].time_lost, 0);
    CLOSE(g.all_total, 2);
    CLOSE(mb_gap_per_step(&g, g.total), 1);
    mb_gap_free(&g);
    mb_run_free(&r);
}

/* ---- diagnosis -------------------------------------------------------------------------------- */

static bool has_finding(const mb_diagnosis *d, const char *id)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->findings[i].id, id) == 0)
            return true;
    return false;
}

static bool has_remedy(const mb_diagnosis *d, const char *id, const char *words)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->findings[i].id, id) == 0)
            for (int j = 0; j < d->findings[i].n_remedies; j++)
                if (strstr(d->findings[i].remedies[j], words))
                    return true;
    return false;
}

static bool finding_says(const mb_finding *x, const char *needle)
{
    for (int i = 0; i < x->n_evidence; i++)
        if (strstr(x->evidence[i], needle))
            return true;
    return false;
}

/* A stage file saying a copy overlaps compute: 4 s of copying of which 1 s
 * is exposed. Only that second counts: in the total (10 + 1), the share, the
 * time lost ((4 - time at ceiling) x 1/4) and the Amdahl step; no overlap
 * note. Out-of-range exposed time is an error naming the key. */
static void test_stage_file_exposed(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    const char *run = scratch_file("exposed.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"upload\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pinned\","
                                   "\"bytes\":1e10,\"seconds\":4,\"exposed_seconds\":1},"
                                   "{\"name\":\"train\",\"component\":\"other\",\"seconds\":10}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_true(r.stages[0].has_exposed);
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_true(g.stages[0].match >= 0);
    double tac = g.stages[0].time_at_ceiling;
    assert_true(tac > 0 && tac < 4);
    CLOSE(g.total, 11);
    CLOSE(g.stages[0].exposed, 1);
    CLOSE(g.stages[0].share, 1.0 / 11);
    CLOSE(g.stages[0].time_lost, (4 - tac) / 4);
    CLOSE(g.stages[0].amdahl_total, 11 - (4 - tac) / 4);
    assert_int_equal(g.n_notes, 0);
    /* the page's stage table: the time (4 s) and the exposed second the share is of, as the text */
    char *page = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&page, &len);
    assert_non_null(m);
    assert_int_equal(mb_gap_html(m, &g, NULL, &err), MB_OK);
    fclose(m);
    const char *stages = strstr(page, "<table class=\"stages\">");
    assert_non_null(stages);
    assert_non_null(strstr(stages, "<th>time</th><th>exposed</th>"));
    const char *up = strstr(stages, "<td>upload</td>");
    assert_non_null(up);
    const char *t4 = strstr(up, "<td class=\"n\">4 s</td><td class=\"n\">1 s</td>");
    assert_true(t4 != NULL && t4 < strstr(up, "</tr>"));
    free(page);
    mb_gap_free(&g);
    mb_run_free(&r);

    const char *bad = scratch_file("exposed_bad.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"train\",\"component\":\"other\",\"seconds\":10,\"exposed_seconds\":11}]}");
    assert_int_equal(mb_run_read(bad, &r, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "exposed_seconds"));
}

static void diagnose_text(fx *f, const char *name, const char *json)
{
    build(f, scratch_file(name, json));
}

static void test_diagnosis_data_loading(void **state)
{
    fx *f = *state;
    build(f, data_path("gap_run.json"));
    /* data 85/300 = 28% >= 20%; launch 10% < 15%; sync 1.7% < 10%; copies
     * 13% < 15%; GPU 45% busy: neither GPU compute bound nor CPU bound */
    assert_int_equal(f->diag.n, 1);
    assert_string_equal(f->diag.findings[0].id, "data_loading_bound");
    CLOSE(f->diag.fig.data_share, 85.0 / 300);
    assert_true(f->diag.fig.random_disk);
    assert_true(has_remedy(&f->diag, "data_loading_bound", "sequentially"));
    assert_true(has_remedy(&f->diag, "data_loading_bound", "num_workers"));
}

/* A disk case of one page fault, or one read, at a time: what reading only a loader's batches would take, made as
 * its workers make them. A memory-mapped loader with MADV_RANDOM took 4.96 ms a batch of 32 16-KiB records on this
 * VM, where the disk's 32-deep 16 KiB case said 541 us and its 4 KiB page-fault case (114 MB/s) 4.6 ms. */
static const char *disk_one_at_a_time_results(void)
{
    static const char *const extra[] = {
        "{\"id\":\"disk/mmap/advice=random,block_size=4096,pattern=random\",\"component\":\"disk\",\"backend\":\"mmap\","
        "\"params\":{\"advice\":\"random\",\"block_size\":\"4096\",\"pattern\":\"random\"},\"status\":\"ok\","
        "\"work_unit\":\"byte\",\"work_per_iteration\":131072,\"rate_unit\":\"MB/s\",\"rate_scale\":1e6,"
        "\"rate\":{\"median\":100},\"verification\":{\"status\":\"passed\"}}",
        "{\"id\":\"disk/io_uring/block_size=65536,mode=direct,pattern=random,qd=1\",\"component\":\"disk\","
        "\"backend\":\"io_uring\",\"params\":{\"block_size\":\"65536\",\"mode\":\"direct\",\"pattern\":\"random\","
        "\"qd\":\"1\"},\"status\":\"ok\",\"work_unit\":\"byte\",\"work_per_iteration\":131072,\"rate_unit\":\"MB/s\","
        "\"rate_scale\":1e6,\"rate\":{\"median\":300},\"verification\":{\"status\":\"passed\"}}",
    };
    FILE *in = fopen(data_path("gap_here.json"), "rb");
    assert_non_null(in);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[n] = '\0';
    cJSON *doc = cJSON_Parse(buf), *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    assert_non_null(cases);
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        cJSON_AddItemToArray(cases, cJSON_Parse(extra[i]));
    char *text = cJSON_PrintUnformatted(doc);
    const char *path = scratch_file("disk_one_at_a_time.json", text);
    cJSON_free(text);
    cJSON_Delete(doc);
    return path;
}

static void test_needed_reads_one_at_a_time(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_ceilings c;
    assert_int_equal(mb_ceilings_load(disk_one_at_a_time_results(), &c, &err), MB_OK);
    static const char run[] =
        "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":10},\"stages\":["
        "{\"name\":\"data loading\",\"component\":\"disk\",\"pattern\":\"random\",\"block_size\":667257,"
        "\"bytes_per_step\":105720685.7,\"seconds_per_step\":0.084,\"device\":\"cpu\"},"
        "{\"name\":\"step\",\"component\":\"other\",\"role\":\"compute\",\"device\":\"cpu\",\"seconds_per_step\":0.014}],"
        "\"simplify\":{\"complete\":true,\"data_loading\":{\"storage_bytes_per_batch\":105720685.7,"
        "\"delivered_bytes_per_batch\":196608,\"amplification\":537.72,\"amplified\":true,\"bound\":\"storage\","
        "\"cache\":\"cold\",\"items_per_batch\":12,%s\"mechanism\":\"%s\"}}}";
    static const struct {
        const char *workers, *mechanism;
        double rate;  /* bytes a second the batches' bytes are read at */
        bool faults;
        const char *says;
    } cases[] = {
        /* page faults of 4 KiB one at a time, in the step's process: 196608 B at 100 MB/s, 1.97 ms a batch */
        { "", "readahead around the page faults of a memory-mapped file read at random offsets", 100e6, true,
          "disk would take 1.97 ms a batch (disk/mmap advice=random block_size=4k pattern=random; 4 KiB page faults "
          "(MADV_RANDOM) one at a time in the step's process (no workers))" },
        /* read() calls of an item, one at a time in each of 2 workers: the 64 KiB qd=1 case, twice, 328 us */
        { "\"workers\":2,", "readahead beyond the bytes read() asked for", 600e6, false,
          "disk would take 328 µs a batch (disk/io_uring block_size=64k mode=direct pattern=random qd=1; reads of an "
          "item one at a time in each of its 2 workers)" },
        /* 8 workers' reads at once go no faster than the disk's best for the item (the 4 KiB 32-deep case) */
        { "\"workers\":8,", "readahead beyond the bytes read() asked for", 800e6, false,
          "disk would take 246 µs a batch (disk/io_uring block_size=4k mode=direct pattern=random qd=32; its 8 workers' "
          "reads, one at a time each, together reach this, the disk's best)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[2048];
        snprintf(text, sizeof text, run, cases[i].workers, cases[i].mechanism);
        mb_diagnosis_free(&f->diag);
        mb_gap_free(&f->gap);
        mb_run_free(&f->run);
        assert_int_equal(mb_run_read(scratch_file("needed_reads.json", text), &f->run, &err), MB_OK);
        assert_int_equal(mb_gap_build(&f->run, &c, &f->matching, &f->gap, &err), MB_OK);
        assert_int_equal(mb_diagnose(&f->gap, &f->thresholds, &f->remedies, &f->diag, &err), MB_OK);
        CLOSE(f->gap.needed_seconds, 196608.0 * 10 / cases[i].rate);
        assert_false(f->gap.needed_queued);
        assert_true(f->gap.needed_faults == cases[i].faults);
        if (!finding_says(&f->diag.findings[0], cases[i].says))
            fail_msg("case %zu: not said: %s", i, cases[i].says);
    }
    mb_ceilings_free(&c);
}

/* A simplify run's loader (stage file version 2, simplify.data_loading):
 * gap tells its story, with its figures and its own remedies first. A
 * memory-mapped file read at random, 106 MB from storage per batch for the
 * 197 kB a batch holds (nanoGPT's get_batch on this project's VM): the
 * amplification and its mechanism in the evidence; madvise, readahead and
 * shards first; no "store it sequentially" twice; "load it into RAM" only
 * when the dataset fits; nothing of decoding for a loader that decodes
 * nothing. A CPU-bound loader: its CPU per item, and the decode remedy. */
static void test_diagnosis_simplify_loader(void **state)
{
    fx *f = *state;
    static const char *const runs[] = {
        "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":10},\"stages\":["
        "{\"name\":\"data loading\",\"component\":\"disk\",\"pattern\":\"random\",\"block_size\":667257,"
        "\"bytes_per_step\":105720685.7,\"seconds_per_step\":0.084,\"device\":\"cpu\"},"
        "{\"name\":\"step\",\"component\":\"other\",\"role\":\"compute\",\"device\":\"cpu\",\"seconds_per_step\":0.014}],"
        "\"simplify\":{\"complete\":true,\"dataset\":{\"fits_in_memory\":%s},"
        "\"data_loading\":{\"storage_bytes_per_batch\":105720685.7,\"delivered_bytes_per_batch\":196608,"
        "\"amplification\":537.72,\"amplified\":true,\"bound\":\"storage\",\"cache\":\"cold\",\"device_busy_share\":0.98,"
        "\"items_per_batch\":12,"
        "\"mechanism\":\"readahead around the page faults of a memory-mapped file read at random offsets\","
        "\"remedies\":[\"madvise(MADV_RANDOM) on the mapping\",\"a smaller readahead (read_ahead_kb 8192 on vda now)\","
        "\"a sequential sharded format (WebDataset or tar shards)\"]}}}",
        "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":10},\"stages\":["
        "{\"name\":\"data loading\",\"component\":\"other\",\"role\":\"data\",\"device\":\"cpu\",\"seconds_per_step\":0.1},"
        "{\"name\":\"step\",\"component\":\"other\",\"role\":\"compute\",\"device\":\"cpu\",\"seconds_per_step\":0.01}],"
        "\"simplify\":{\"complete\":true,\"data_loading\":{\"storage_bytes_per_batch\":0,"
        "\"delivered_bytes_per_batch\":4194304,\"amplification\":0,\"amplified\":false,\"bound\":\"cpu\","
        "\"cache\":\"cold\",\"cpu_seconds_per_item\":0.0031,\"cpu_busy_share\":0.97,"
        "\"cpu_work\":\"reading from the page cache, decoding, augmenting\"}}}",
    };
    char text[2048];
    for (int fits = 1; fits >= 0; fits--) {
        snprintf(text, sizeof text, runs[0], fits ? "true" : "false");
        diagnose_text(f, "simplify_loader.json", text);
        assert_string_equal(f->diag.findings[0].id, "data_loading_bound");
        const mb_finding *x = &f->diag.findings[0];
        assert_true(finding_says(x, "the loader alone (simplify, page cache cold) read 106 MB from storage per batch "
                                    "for the 197 kB it delivers (538x, read-amplified): readahead around the page "
                                    "faults of a memory-mapped file read at random offsets"));
        assert_string_equal(x->remedies[0], "madvise(MADV_RANDOM) on the mapping");
        assert_string_equal(x->remedies[2], "a sequential sharded format (WebDataset or tar shards)");
        assert_false(has_remedy(&f->diag, "data_loading_bound", "store the dataset sequentially"));
        assert_true(has_remedy(&f->diag, "data_loading_bound", "num_workers"));
        assert_true(has_remedy(&f->diag, "data_loading_bound", "load it into RAM once") == (fits == 1));
        assert_false(has_remedy(&f->diag, "data_loading_bound", "Pre-process once offline"));
        /* what reading only the batches' bytes would take: 16 KiB an item at random, nearest the fixture's 4 KiB
         * random case (800 MB/s): 196608 B x 10 steps / 800 MB/s, 246 us a batch */
        CLOSE(f->gap.needed_block, 16384);
        CLOSE(f->gap.needed_seconds, 196608.0 * 10 / 800e6);
        assert_true(finding_says(x, "read only for what it delivers (197 kB a batch, 16.4 kB an item), this machine's "
                                    "disk would take 246 µs a batch (disk/io_uring block_size=4k mode=direct "
                                    "pattern=random qd=32; no case of one read at a time was measured, and the loader "
                                    "makes fewer at once: longer than this), where the loop's data loading takes 84 ms"));
    }
    /* "pin_memory=True" only where the copies are not all pinned already (a MONAI loader's 24 pinned H2D
     * copies were told to pin): a GPU run's loader with pinned copies, then with pageable ones */
    static const char pin_run[] =
        "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["
        "{\"name\":\"data loading\",\"component\":\"other\",\"role\":\"data\",\"seconds_per_step\":0.1},"
        "{\"name\":\"h2d\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"%s\","
        "\"bytes_per_step\":4194304,\"seconds_per_step\":0.001},"
        "{\"name\":\"step\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops_per_step\":1e12,"
        "\"seconds_per_step\":0.01}]}";
    for (int pinned = 1; pinned >= 0; pinned--) {
        snprintf(text, sizeof text, pin_run, pinned ? "pinned" : "pageable");
        diagnose_text(f, "pinned_loader.json", text);
        assert_string_equal(f->diag.findings[0].id, "data_loading_bound");
        assert_true(has_remedy(&f->diag, "data_loading_bound", "pin_memory=True") == (pinned == 0));
    }
    diagnose_text(f, "simplify_decode.json", runs[1]);
    assert_string_equal(f->diag.findings[0].id, "data_loading_bound");
    assert_int_equal(f->gap.needed_case, -1); /* not amplified: its reads are what it needs */
    assert_true(finding_says(&f->diag.findings[0], "the loader alone (simplify, page cache cold) is CPU-bound: "
                                                   "3.1 ms of CPU per item, 0 B per batch from storage"));
    assert_true(finding_says(&f->diag.findings[0], "its time is reading from the page cache, decoding, augmenting, "
                                                   "not the device"));
    assert_true(has_remedy(&f->diag, "data_loading_bound", "Pre-process once offline"));
    assert_false(has_remedy(&f->diag, "data_loading_bound", "madvise"));
    /* its stage has no ceiling because it is CPU work, not for want of its bytes from disk */
    assert_string_equal(stage(&f->gap, "data loading")->bound_hint,
                        "CPU work, time only (no benchmark measures decoding or augmenting): the loader alone was "
                        "CPU-bound (simplify)");
    /* both busy (nanoGPT's loader with MADV_RANDOM: one process faults a page, then copies it): both said, its
     * stage held against the disk, and the decode remedies stay (its CPU is half its time) */
    diagnose_text(f, "simplify_turns.json",
                  "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":10},\"stages\":["
                  "{\"name\":\"data loading\",\"component\":\"disk\",\"pattern\":\"random\",\"block_size\":4096,"
                  "\"bytes_per_step\":70300,\"seconds_per_step\":0.03,\"device\":\"cpu\"},"
                  "{\"name\":\"step\",\"component\":\"other\",\"role\":\"compute\",\"device\":\"cpu\","
                  "\"seconds_per_step\":0.01}],"
                  "\"simplify\":{\"complete\":true,\"data_loading\":{\"storage_bytes_per_batch\":70300,"
                  "\"delivered_bytes_per_batch\":196608,\"amplification\":0.357,\"amplified\":false,"
                  "\"bound\":\"cpu+storage\",\"cache\":\"cold\",\"cpu_seconds_per_item\":0.00013,"
                  "\"cpu_busy_share\":0.63,\"device_busy_share\":0.54}}}");
    assert_string_equal(f->diag.findings[0].id, "data_loading_bound");
    assert_true(finding_says(&f->diag.findings[0], "the loader alone (simplify, page cache cold) is CPU- and "
                                                   "storage-bound: its processes on a CPU 63.0% of the time (130 µs "
                                                   "of CPU per item), the device busy 54.0% for 70.3 kB per batch "
                                                   "from storage"));
    assert_true(has_remedy(&f->diag, "data_loading_bound", "Pre-process once offline"));
    const mb_gap_stage *dl = stage(&f->gap, "data loading");
    assert_string_equal(dl->stage->component, "disk");
    assert_null(strstr(dl->bound_hint, "CPU work"));
}

static void test_diagnosis_launch_bound(void **state)
{
    fx *f = *state;
    diagnose_text(f, "launch.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"gpu_utilization\":0.5},\"stages\":["
                  "{\"name\":\"launches\",\"component\":\"launch\",\"launches\":1e6,\"seconds\":40},"
                  "{\"name\":\"mm\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":1e15,\"seconds\":60}]}");
    CLOSE(f->diag.fig.launch_share, 0.4);
    assert_true(has_finding(&f->diag, "launch_bound"));
    assert_true(has_remedy(&f->diag, "launch_bound", "CUDA Graphs"));
    assert_true(has_remedy(&f->diag, "launch_bound", "Bigger batches"));
    /* a stage file does not say whether its loop steps an optimizer or runs compiled code: both remedies */
    assert_true(has_remedy(&f->diag, "launch_bound", "Fused/foreach optimizers"));
    assert_true(has_remedy(&f->diag, "launch_bound", "Fuse small operations"));
    assert_false(has_remedy(&f->diag, "launch_bound", "Compiled already"));
    assert_false(has_finding(&f->diag, "gpu_compute_bound"));
}

static void test_diagnosis_sync_bound(void **state)
{
    fx *f = *state;
    diagnose_text(f, "sync.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                  "{\"name\":\"item\",\"component\":\"sync\",\"syncs\":1e5,\"seconds\":30},"
                  "{\"name\":\"rest\",\"component\":\"other\",\"seconds\":70}]}");
    CLOSE(f->diag.fig.sync_share, 0.3);
    assert_true(has_finding(&f->diag, "sync_bound"));
    assert_true(has_remedy(&f->diag, "sync_bound", "Fewer syncs"));
}

static void test_diagnosis_gpu_compute_bound(void **state)
{
    fx *f = *state;
    diagnose_text(f, "gpu.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"gpu_utilization\":0.95},\"stages\":["
                  "{\"name\":\"mm\",\"component\":\"gemm\",\"dtype\":\"fp32\",\"flops\":1e15,\"seconds\":90},"
                  "{\"name\":\"rest\",\"component\":\"other\",\"seconds\":10}]}");
    assert_true(has_finding(&f->diag, "gpu_compute_bound"));
    /* fp32 work: lower precision; 1e15/90 FLOP/s is 1.9% of the bf16 ceiling: low efficiency */
    assert_true(f->diag.fig.fp32_compute);
    CLOSE(f->diag.fig.compute_efficiency, (1e15 / 90) / 600e12);
    assert_true(has_remedy(&f->diag, "gpu_compute_bound", "Lower precision"));
    assert_true(has_remedy(&f->diag, "gpu_compute_bound", "far below the measured ceiling"));
    assert_non_null(strstr(stage(&f->gap, "mm")->why, "dtype fp32 not measured, nearest"));
    assert_true(has_remedy(&f->diag, "gpu_compute_bound", "TF32 for fp32 matmuls"));
    /* TF32 already on (a trace's fp32 matmuls whose kernels ran TF32): what is left is bf16, not "TF32 for fp32" */
    diagnose_text(f, "gpu_tf32.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"gpu_utilization\":0.95},\"stages\":["
                  "{\"name\":\"mm\",\"component\":\"gemm\",\"dtype\":\"tf32\",\"flops\":1e15,\"seconds\":90},"
                  "{\"name\":\"rest\",\"component\":\"other\",\"seconds\":10}]}");
    assert_false(f->diag.fig.fp32_compute);
    assert_true(f->diag.fig.tf32_compute);
    assert_false(has_remedy(&f->diag, "gpu_compute_bound", "TF32 for fp32 matmuls"));
    assert_true(has_remedy(&f->diag, "gpu_compute_bound", "already run TF32"));
}

static void test_diagnosis_cpu_bound_and_copies(void **state)
{
    fx *f = *state;
    diagnose_text(f, "cpu.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                  "{\"name\":\"postprocess\",\"component\":\"other\",\"device\":\"cpu\",\"seconds\":50},"
                  "{\"name\":\"upload\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pageable\","
                  "\"bytes\":1e11,\"seconds\":30},"
                  "{\"name\":\"mm\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":1e15,\"seconds\":20}]}");
    CLOSE(f->diag.fig.cpu_share, 0.5);
    CLOSE(f->diag.fig.copy_share, 0.3);
    CLOSE(f->diag.fig.pageable_share, 0.3);
    assert_true(has_finding(&f->diag, "cpu_compute_bound"));
    assert_true(has_finding(&f->diag, "copy_bound"));
    assert_true(has_remedy(&f->diag, "copy_bound", "pinned memory"));
    /* sorted by weight: CPU 50% before copies 30% */
    assert_string_equal(f->diag.findings[0].id, "cpu_compute_bound");
}

static void test_diagnosis_none(void **state)
{
    fx *f = *state;
    diagnose_text(f, "none.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                  "{\"name\":\"mm\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":1e15,\"seconds\":50},"
                  "{\"name\":\"rest\",\"component\":\"other\",\"seconds\":50}]}");
    assert_int_equal(f->diag.n, 0);
}

/* A stage beating its nearest case by more than [above_ceiling] margin
 * (10%) has no ceiling, said with the sizes: a loader served 1 MiB requests
 * at 3 GB/s held to gap_here.json's 128 KiB random case (2 GB/s) is at 150%
 * of it, which is no ceiling (nanoGPT's memmap loader, 652 KiB requests
 * against `--suite quick`'s 64 KiB case, read "at 173.1% of its ceiling").
 * At 105% the case's noise explains it: the case stays the ceiling. */
static void test_beyond_nearest_case(void **state)
{
    fx *f = *state;
    diagnose_text(f, "beyond.json",
                  "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["
                  "{\"name\":\"big reads\",\"component\":\"disk\",\"pattern\":\"random\",\"block_size\":1048576,"
                  "\"bytes\":3e9,\"seconds\":1},"
                  "{\"name\":\"near\",\"component\":\"disk\",\"pattern\":\"random\",\"block_size\":131072,"
                  "\"bytes\":2.1e9,\"seconds\":1},"
                  "{\"name\":\"rest\",\"component\":\"other\",\"seconds\":2}]}");
    const mb_gap_stage *big = stage(&f->gap, "big reads"), *near = stage(&f->gap, "near");
    assert_string_equal(matched_id(f, big), "disk/io_uring/block_size=131072,mode=direct,pattern=random,qd=32");
    CLOSE(big->efficiency, 1.5);
    CLOSE(big->time_lost, 0);
    assert_false(mb_gap_stage_bounded(big));
    assert_string_equal(big->beyond, "faster than its nearest case (150.0% of it): no case was measured at its 1 MiB "
                                     "per call (the case: 128 KiB); `mlbench --suite disk` measures more sizes; "
                                     "nothing lost counted");
    CLOSE(near->efficiency, 1.05);
    assert_true(mb_gap_stage_bounded(near));
    assert_string_equal(near->beyond, "");
    /* only "near" has a ceiling: 1 s of the 4 */
    CLOSE(f->gap.bounded_share, 0.25);
    char v[MB_GAP_WHY_LEN + 64];
    mb_gap_stage_verdict(v, sizeof v, &f->gap, big);
    assert_string_equal(v, big->beyond);
    mb_gap_stage_verdict(v, sizeof v, &f->gap, near);
    assert_string_equal(v, "at 105.0% of its ceiling: nothing lost");
    /* the diagnosis says it of the stage, not "at 150.0% of the measured disk ceiling" */
    assert_true(finding_says(&f->diag.findings[0], "stage 'big reads' reads random at 3 GB/s, faster than its "
                                                   "nearest case (150.0% of it)"));
    assert_false(finding_says(&f->diag.findings[0], "150.0% of the measured disk ceiling"));
    assert_true(finding_says(&f->diag.findings[0], "stage 'near' reads random at 105.0% of the measured disk ceiling"));
    /* JSON: the headline says it has no ceiling, and why */
    cJSON *doc = mb_gap_to_json(&f->gap, &f->diag);
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "headline"), "stages");
    const cJSON *h;
    int seen = 0;
    cJSON_ArrayForEach(h, hs)
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(h, "name")->valuestring;
        const cJSON *has = cJSON_GetObjectItemCaseSensitive(h, "has_ceiling");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(h, "no_ceiling");
        if (strcmp(name, "big reads") == 0) {
            assert_true(cJSON_IsFalse(has));
            assert_string_equal(why->valuestring, big->beyond);
            seen++;
        } else if (strcmp(name, "near") == 0) {
            assert_true(cJSON_IsTrue(has) && cJSON_IsNull(why));
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    cJSON_Delete(doc);
}

/* A trace-derived run: the evidence object (docs/traces.md keys) drives the
 * figures. GPU busy 3 of 10 s, idle 7 s, host in launch calls 6 s (86% of
 * the idle time), DataLoader 3 s, host in syncs 0.5 s of which the GPU idled
 * 0.4 s. */
static void test_diagnosis_trace_evidence(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_run r;
    mb_run_init(&r);
    mb_stage s = { .name = "gemm", .component = "gemm", .dtype = "bf16", .work = 1e15, .work_unit = "flop",
                   .seconds = 2.5 };
    assert_int_equal(mb_run_add_stage(&r, &s, &err), MB_OK);
    r.total_seconds = 10;
    r.evidence = cJSON_Parse("{\"reader\":\"pytorch-trace\",\"devices\":[{\"id\":0,\"busy_s\":3,\"window_s\":10,"
                             "\"idle_s\":7,\"host_wait_idle_s\":0.4,\"classes\":{\"gemm\":{\"seconds\":2.5,\"count\":10}}}],"
                             "\"host\":{\"launch\":{\"count\":70000,\"seconds\":6},\"sync\":{\"count\":10,\"seconds\":0.5},"
                             "\"dataloader\":{\"count\":5,\"seconds\":3}}}");
    assert_non_null(r.evidence);
    mb_gap g;
    mb_diagnosis d;
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    CLOSE(d.fig.gpu_util, 0.3);
    CLOSE(d.fig.gpu_idle_share, 0.7);
    CLOSE(d.fig.launch_idle_ratio, 6.0 / 7);
    CLOSE(d.fig.launch_share, 0.6);
    CLOSE(d.fig.data_share, 0.3);
    CLOSE(d.fig.sync_share, 0.4 / 10);
    CLOSE(d.fig.sync_host_share, 0.5 / 10);
    CLOSE(d.fig.launches, 70000);
    assert_true(has_finding(&d, "launch_bound"));
    assert_true(has_finding(&d, "data_loading_bound"));
    assert_false(has_finding(&d, "sync_bound"));
    assert_string_equal(d.findings[0].id, "launch_bound"); /* 0.6 before 0.3 */
    assert_false(finding_says(&d.findings[0], "paid once"));
    mb_diagnosis_free(&d);
    mb_gap_free(&g);

    /* 3 launch calls of 10 ms or more hold 4 of the 6 s (a trace of the first
     * iterations): set-up, not the launch stage's; 2 s of launches remain */
    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"reader\":\"pytorch-trace\",\"devices\":[{\"id\":0,\"busy_s\":3,\"window_s\":10,"
                             "\"idle_s\":7,\"host_wait_idle_s\":0.4}],\"host\":{\"launch\":{\"count\":70000,"
                             "\"seconds\":6,\"long\":{\"count\":3,\"seconds\":4}}}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    CLOSE(d.fig.launch_share, 0.2);
    CLOSE(d.fig.launches, 69997);
    mb_diagnosis_free(&d);
    mb_gap_free(&g);

    /* Syncs: host 3 s in syncs, the GPU idle 2.5 s of it, GPU 50% busy:
     * sync bound. The same host time with the GPU 95% busy (waiting on busy
     * kernels) is not. */
    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"devices\":[{\"busy_s\":5,\"window_s\":10,\"idle_s\":5,\"host_wait_idle_s\":2.5}],"
                             "\"host\":{\"sync\":{\"count\":1000,\"seconds\":3}}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    CLOSE(d.fig.sync_share, 0.25);
    assert_true(has_finding(&d, "sync_bound"));
    mb_diagnosis_free(&d);
    mb_gap_free(&g);
    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"devices\":[{\"busy_s\":9.5,\"window_s\":10,\"idle_s\":0.5,\"host_wait_idle_s\":0.2}],"
                             "\"host\":{\"sync\":{\"count\":1000,\"seconds\":3}}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    CLOSE(d.fig.sync_share, 0.02);
    assert_false(has_finding(&d, "sync_bound"));
    mb_diagnosis_free(&d);
    mb_gap_free(&g);
    mb_run_free(&r);
}

/* A run of one 1-s 'other' stage: the step table in its evidence drives
 * the diagnosis. */
static void one_stage_run(mb_run *r)
{
    mb_err err = { 0 };
    mb_run_init(r);
    mb_stage s = { .name = "x", .component = "other", .work = 1, .work_unit = "s", .seconds = 1 };
    assert_int_equal(mb_run_add_stage(r, &s, &err), MB_OK);
    r->total_seconds = 1;
}

/* A trace step table drives the findings. (1) Data 45% and sync 40% (close:
 * runner-up), the rest memory-bound kernels. (2) Data 35%, kernels 30%,
 * launch 5% + host code 30% with 400 kernels per step and no launch stage
 * (so no launch ceiling: the kernels-per-step rule): host overhead 35%, not
 * CPU compute; GPU compute 30% is below its 60% and not reported. (3) 55%
 * memory-bound kernels: below 60% but most of the step, so reported. */
static void test_diagnosis_step_table(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_run r;
    one_stage_run(&r);
    r.evidence = cJSON_Parse("{\"step\":{\"gpu_busy_share\":0.15,\"kernels_per_step\":20,\"parts\":["
                             "{\"id\":\"data\",\"share\":0.45},{\"id\":\"sync\",\"share\":0.40},"
                             "{\"id\":\"memory_bound\",\"share\":0.15}]}}");
    mb_gap g;
    mb_diagnosis d;
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    assert_true(d.fig.step_table);
    CLOSE(d.fig.gpu_util, 0.15);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.findings[0].id, "data_loading_bound");
    assert_string_equal(d.findings[1].id, "sync_bound");
    assert_true(d.runner_up);
    mb_diagnosis_free(&d);
    mb_gap_free(&g);

    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"step\":{\"gpu_busy_share\":0.30,\"kernels_per_step\":400,\"parts\":["
                             "{\"id\":\"data\",\"share\":0.35},{\"id\":\"conv\",\"share\":0.10},"
                             "{\"id\":\"memory_bound\",\"share\":0.20},{\"id\":\"launch\",\"share\":0.05},"
                             "{\"id\":\"host\",\"share\":0.30}]}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    CLOSE(d.fig.tensor_share, 0.10);
    CLOSE(d.fig.memory_share, 0.20);
    assert_true(has_finding(&d, "launch_bound"));
    assert_true(has_finding(&d, "data_loading_bound"));
    assert_false(has_finding(&d, "gpu_compute_bound"));
    assert_false(has_finding(&d, "cpu_compute_bound")); /* host overhead, not host compute */
    CLOSE(d.findings[0].weight, 0.35);
    assert_true(d.runner_up);
    mb_diagnosis_free(&d);
    mb_gap_free(&g);

    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"step\":{\"gpu_busy_share\":0.55,\"kernels_per_step\":10,\"parts\":["
                             "{\"id\":\"memory_bound\",\"share\":0.55},{\"id\":\"host\",\"share\":0.25},"
                             "{\"id\":\"data\",\"share\":0.20}]}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    assert_string_equal(d.findings[0].id, "gpu_compute_bound");
    assert_string_equal(d.findings[0].title, "GPU compute bound (memory-bound kernels 55.0%, matrix math 0.0%)");
    assert_true(has_remedy(&d, "gpu_compute_bound", "fused"));
    /* the evidence says why a share under its threshold is a finding; it
     * read "55.0% of the step (threshold 60.0%)": a step this run does not have and a threshold it did not reach */
    assert_true(finding_says(&d.findings[0],
                             "GPU kernels run 55.0% of the run (below its threshold 60.0% but more than half)"));
    /* and the pattern line holds no figure the evidence can contradict (it
     * said ">90% busy" beside "GPU busy 55.0%") */
    assert_false(finding_says(&d.findings[0], "90%"));
    mb_diagnosis_free(&d);
    mb_gap_free(&g);

    /* a share just under its threshold that rounds to it says the figure it is (openpi's H200 trace read "60.0%
       of the run (below its threshold 60.0% ...)") */
    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"step\":{\"gpu_busy_share\":0.59996,\"kernels_per_step\":10,\"parts\":["
                             "{\"id\":\"memory_bound\",\"share\":0.59996},{\"id\":\"host\",\"share\":0.20004},"
                             "{\"id\":\"data\",\"share\":0.20}]}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    assert_string_equal(d.findings[0].id, "gpu_compute_bound");
    assert_true(finding_says(&d.findings[0], "GPU kernels run 60.0% of the run (below its threshold 60.0%, at 59.99%, "
                                             "but more than half)"));
    mb_diagnosis_free(&d);
    mb_gap_free(&g);

    /* the title gives each kind its own share; the finding's (every kernel,
     * 80%) once read as matrix math's ("tensor-core math, 96.0%" for
     * DeepSeek's H800 step, 71.0% of it matrix math) */
    cJSON_Delete(r.evidence);
    r.evidence = cJSON_Parse("{\"step\":{\"gpu_busy_share\":0.80,\"kernels_per_step\":10,\"parts\":["
                             "{\"id\":\"gemm\",\"share\":0.30},{\"id\":\"attention\",\"share\":0.20},"
                             "{\"id\":\"memory_bound\",\"share\":0.30},{\"id\":\"host\",\"share\":0.20}]}}");
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    assert_string_equal(d.findings[0].title, "GPU compute bound (matrix math 50.0%, memory-bound kernels 30.0%)");
    CLOSE(d.findings[0].weight, 0.80);
    mb_diagnosis_free(&d);
    mb_gap_free(&g);
    mb_run_free(&r);
}

/* Collectives get the remedies of the parallelism that made them: FSDP's
 * all-gathers and reduce-scatters (a 2x4090 FSDP trace once got DDP's
 * bucket_cap_mb) prefetch and wrapping; DDP's all-reduce, bucketing; a trace
 * without a backward pass (a tensor-parallel forward's all-gathers were told
 * FSDP's prefetch) neither, but the model parallelism's own. Stage files of
 * 10 s: 6 s of collectives, the rest compute; the third, the first's with a
 * trace's evidence of no backward op. */
static void test_diagnosis_comm_kind(void **state)
{
    fx *f = *state;
    static char *const kind[][2] = { { "allgather", "reducescatter" }, { "allreduce", "allreduce" },
                                     { "allgather", "reducescatter" } };
    for (int i = 0; i < 3; i++) {
        mb_err err = { 0 };
        mb_run r;
        mb_run_init(&r);
        mb_stage c1 = { .name = "c1", .component = kind[i][0], .work = 4, .work_unit = "s", .seconds = 4 };
        mb_stage c2 = { .name = "c2", .component = kind[i][1], .work = 2, .work_unit = "s", .seconds = 2 };
        mb_stage x = { .name = "x", .component = "other", .work = 4, .work_unit = "s", .seconds = 4 };
        assert_int_equal(mb_run_add_stage(&r, &c1, &err), MB_OK);
        assert_int_equal(mb_run_add_stage(&r, &c2, &err), MB_OK);
        assert_int_equal(mb_run_add_stage(&r, &x, &err), MB_OK);
        r.total_seconds = 10;
        if (i == 2)
            r.evidence = cJSON_Parse("{\"trace\":{\"backward_ops\":0,\"optimizer_steps\":0}}");
        mb_gap g;
        mb_diagnosis d;
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        assert_string_equal(d.findings[0].id, "communication_bound");
        CLOSE(d.fig.comm_sharded_s, i != 1 ? 6 : 0);
        CLOSE(d.fig.comm_allreduce_s, i != 1 ? 0 : 6);
        assert_true(has_remedy(&d, "communication_bound", "forward_prefetch") == (i == 0));
        assert_true(has_remedy(&d, "communication_bound", "bucket_cap_mb") == (i == 1));
        assert_true(has_remedy(&d, "communication_bound", "No backward pass (inference)") == (i == 2));
        assert_true(has_remedy(&d, "communication_bound", "Check the interconnect"));
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
        mb_run_free(&r);
    }
}

/* A trace says both: a forward-only H100 trace (no Optimizer.step) was told
 * "fused optimizers", a compiled ResNet-18 "torch.compile". */
static void test_diagnosis_launch_remedies_by_trace(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    static const char *const traces[] = { "\"optimizer_steps\":0,\"compiled_regions\":6",
                                          "\"optimizer_steps\":3,\"compiled_regions\":0" };
    for (int i = 0; i < 2; i++) {
        mb_run r;
        one_stage_run(&r);
        r.total_seconds = 10;
        char ev[1024];
        snprintf(ev, sizeof ev,
                 "{\"trace\":{%s},\"step\":{\"seconds\":10,\"gpu_busy_share\":0.10,\"parts\":["
                 "{\"id\":\"launch\",\"share\":0.60},{\"id\":\"host\",\"share\":0.30},"
                 "{\"id\":\"gemm\",\"share\":0.10}]}}", traces[i]);
        r.evidence = cJSON_Parse(ev);
        mb_gap g;
        mb_diagnosis d;
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        assert_string_equal(d.findings[0].id, "launch_bound");
        assert_true(has_remedy(&d, "launch_bound", "Fused/foreach optimizers") == (i == 1));
        assert_true(has_remedy(&d, "launch_bound", "Compiled already") == (i == 0));
        assert_true(has_remedy(&d, "launch_bound", "Fuse small operations") == (i == 1));
        assert_false(has_remedy(&d, "launch_bound", "First record the host")); /* ops unknown here */
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
        mb_run_free(&r);
    }
}

/* A trace without one CPU op (ProfilerActivity.CPU off: an A10G's 6 kernels
 * in 14.5 s, 14.4 s of it "host code") says first to record the host: what
 * filled that time is not in it; a trace with ops does not. */
static void test_diagnosis_host_unrecorded(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    for (int ops = 0; ops <= 40; ops += 40) {
        mb_run r;
        one_stage_run(&r);
        r.total_seconds = 10;
        char ev[1024];
        snprintf(ev, sizeof ev,
                 "{\"host\":{\"ops\":%d},\"step\":{\"steps\":1,\"seconds\":10,\"gpu_busy_share\":0.10,"
                 "\"parts\":[{\"id\":\"launch\",\"share\":0.60},{\"id\":\"host\",\"share\":0.30},"
                 "{\"id\":\"gemm\",\"share\":0.10}]}}", ops);
        r.evidence = cJSON_Parse(ev);
        mb_gap g;
        mb_diagnosis d;
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        assert_string_equal(d.findings[0].id, "launch_bound");
        assert_true(has_remedy(&d, "launch_bound", "First record the host") == (ops == 0));
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
        mb_run_free(&r);
    }
}

/* "Optimizer step: fused or foreach optimizers" in a GPU-compute-bound run:
 * where memory-bound kernels lead and the trace steps an optimizer; not in
 * a forward-only trace (an A100 particle transformer's inference was told
 * it) nor where matrix math leads. */
static void test_diagnosis_compute_optimizer_remedy(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    static const struct {
        int optimizer_steps;
        double memory, gemm;
        bool told;
    } runs[] = { { 0, 0.70, 0.20, false }, { 3, 0.70, 0.20, true }, { 3, 0.20, 0.70, false } };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        mb_run r;
        one_stage_run(&r);
        r.total_seconds = 10;
        char ev[1024];
        snprintf(ev, sizeof ev,
                 "{\"trace\":{\"optimizer_steps\":%d,\"compiled_regions\":0},\"step\":{\"seconds\":10,"
                 "\"gpu_busy_share\":0.90,\"parts\":[{\"id\":\"memory_bound\",\"share\":%g},"
                 "{\"id\":\"gemm\",\"share\":%g},{\"id\":\"host\",\"share\":0.10}]}}",
                 runs[i].optimizer_steps, runs[i].memory, runs[i].gemm);
        r.evidence = cJSON_Parse(ev);
        mb_gap g;
        mb_diagnosis d;
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        assert_string_equal(d.findings[0].id, "gpu_compute_bound");
        assert_true(has_remedy(&d, "gpu_compute_bound", "Optimizer step: fused or foreach") == runs[i].told);
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
        mb_run_free(&r);
    }
}

/* GPU idle in allocation and set-up calls (the step table's "setup" part):
 * 60% of a run without steps is set-up once (particle_transformer's A100
 * trace, 73.9%: one 1337-ms first launch): its finding names the calls and
 * what the other 40% holds (host code 30 of 40: 75.0%; matrix math
 * 10 of 40: 25.0%). In 9 of 10 steps it is the allocator every step; in 2 of
 * 10, once. */
static void test_diagnosis_setup(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_run r;
    one_stage_run(&r);
    r.total_seconds = 10;
    static const char parts[] =
        "\"step\":{\"seconds\":10,\"gpu_busy_share\":0.10,\"parts\":[{\"id\":\"setup\",\"share\":0.60},"
        "{\"id\":\"host\",\"share\":0.30},{\"id\":\"gemm\",\"share\":0.10}]}";
    char ev[1024];
    snprintf(ev, sizeof ev,
             "{\"host\":{\"setup\":{\"count\":3,\"seconds\":6,\"calls\":{\"cudaLaunchKernel\":{\"count\":1,"
             "\"seconds\":2},\"cudaFree\":{\"count\":2,\"seconds\":4}}}},%s}", parts);
    r.evidence = cJSON_Parse(ev);
    mb_gap g;
    mb_diagnosis d;
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
    CLOSE(d.fig.setup_share, 0.60);
    assert_string_equal(d.findings[0].id, "setup_once");
    assert_string_equal(d.bottleneck, d.findings[0].title);
    assert_true(finding_says(&d.findings[0], "cudaFree 4 s (2 calls), cudaLaunchKernel 2 s (1 call)"));
    assert_true(finding_says(&d.findings[0], "without it, the run's other 4 s: host code (GPU idle) 75.0%, "
                                             "matrix math 25.0%"));
    assert_true(has_remedy(&d, "setup_once", "Profile after warm-up"));
    assert_false(has_finding(&d, "launch_bound"));
    mb_diagnosis_free(&d);
    mb_gap_free(&g);
    static const int with[] = { 9, 2 };
    static const char *const expect[] = { "setup_every_step", "setup_once" };
    r.steps = 10;
    for (int i = 0; i < 2; i++) {
        cJSON_Delete(r.evidence);
        snprintf(ev, sizeof ev, "{\"host\":{\"setup\":{\"count\":9,\"seconds\":6,\"steps_with\":%d}},%s}", with[i],
                 parts);
        r.evidence = cJSON_Parse(ev);
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        assert_string_equal(d.findings[0].id, expect[i]);
        char says[64];
        snprintf(says, sizeof says, "set-up calls in %d of 10 steps", with[i]);
        assert_true(finding_says(&d.findings[0], says));
        assert_true(i == 1 || has_remedy(&d, "setup_every_step", "empty_cache"));
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
    }
    /* every step: 300 device allocations and frees in 10 steps is a tensor each, the caching allocator off
     * (TraceLens's "no_pool" ResNet-18 was told empty_cache and fragmentation); a graph capture holding most of
     * the set-up is start-up, however many steps it spans (SGLang's capture trace read "in every step") */
    static const char *const calls[] = {
        "\"cudaMalloc\":{\"count\":300,\"seconds\":1},\"cudaFree\":{\"count\":300,\"seconds\":5}",
        "\"graph capture (StreamBeginCapture ... EndCapture)\":{\"count\":1,\"seconds\":5},"
        "\"cudaFree\":{\"count\":2,\"seconds\":1}",
    };
    static const char *const id[] = { "setup_every_step", "setup_once" };
    for (int i = 0; i < 2; i++) {
        cJSON_Delete(r.evidence);
        snprintf(ev, sizeof ev, "{\"host\":{\"setup\":{\"count\":9,\"seconds\":6,\"steps_with\":9,"
                                "\"calls\":{%s}}},%s}", calls[i], parts);
        r.evidence = cJSON_Parse(ev);
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        assert_string_equal(d.findings[0].id, id[i]);
        if (i == 0) {
            assert_true(has_remedy(&d, id[i], "PYTORCH_NO_CUDA_MEMORY_CACHING"));
            assert_false(has_remedy(&d, id[i], "empty_cache"));
            assert_true(finding_says(&d.findings[0], "in the whole trace (10 steps), 300 device allocations and 300 "
                                                     "frees: a tensor each"));
        } else
            assert_true(finding_says(&d.findings[0], "most of it a CUDA/HIP graph capture"));
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
    }
    mb_run_free(&r);
}

/* The GPU idle in host code, told apart by the host's time per recorded op:
 * 6 ms of a 10 ms step over 1000 ops is 6 us each, what dispatching them
 * costs (host overhead, launch bound), though 50 kernels per step and no
 * launch ceiling give no other sign of it; over 100 ops it is 60 us each,
 * the host running code of its own (CPU compute bound). The H100 and H200
 * traces of one conv net were once read one way each. */
static void test_diagnosis_host_time_per_op(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_run r;
    one_stage_run(&r);
    r.steps = 2;
    static const char *const ops[] = { "2000", "200" };
    static const char *const expect[] = { "launch_bound", "cpu_compute_bound" };
    for (int i = 0; i < 2; i++) {
        char ev[512];
        snprintf(ev, sizeof ev,
                 "{\"host\":{\"ops\":%s},\"step\":{\"steps\":2,\"seconds\":0.01,\"gpu_busy_share\":0.40,"
                 "\"kernels_per_step\":50,\"parts\":[{\"id\":\"memory_bound\",\"share\":0.40},"
                 "{\"id\":\"host\",\"share\":0.60}]}}",
                 ops[i]);
        r.evidence = cJSON_Parse(ev);
        mb_gap g;
        mb_diagnosis d;
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        CLOSE(d.fig.ops_per_step, i == 0 ? 1000 : 100);
        CLOSE(d.fig.host_op_s, i == 0 ? 6e-6 : 60e-6);
        assert_string_equal(d.findings[0].id, expect[i]);
        assert_false(has_finding(&d, expect[1 - i]));
        assert_true(finding_says(&d.findings[0], i == 0 ? "6 us per op the trace recorded (1000 per step): what "
                                                          "dispatching them costs"
                                                        : "60 us per op the trace recorded (100 per step): more "
                                                          "than dispatching them costs"));
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
        cJSON_Delete(r.evidence);
        r.evidence = NULL;
    }
    mb_run_free(&r);
}

/* Far more host time per kernel than launching costs is the host's own
 * code, however many or short the kernels: 150 kernels in a 10 s step of
 * GPU idle host time (66 ms each) read "launch bound" by the kernel count
 * (an A10G trace: 6 kernels in 14.4 s). With no CPU op recorded, the first
 * remedy is to record the host, and nothing says "Use all cores". */
static void test_diagnosis_host_time_per_kernel(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_run r;
    one_stage_run(&r);
    r.steps = 2;
    static const char *const kernels[] = { "150", "100000" };
    for (int i = 0; i < 2; i++) {
        char ev[512];
        snprintf(ev, sizeof ev,
                 "{\"host\":{\"ops\":0},\"step\":{\"steps\":2,\"seconds\":10,\"gpu_busy_share\":0.001,"
                 "\"kernels_per_step\":%s,\"parts\":[{\"id\":\"memory_bound\",\"share\":0.001},"
                 "{\"id\":\"host\",\"share\":0.999}]}}",
                 kernels[i]);
        r.evidence = cJSON_Parse(ev);
        mb_gap g;
        mb_diagnosis d;
        assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
        assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &d, &err), MB_OK);
        CLOSE(d.fig.host_kernel_s, 9.99 / atof(kernels[i]));
        if (i == 0) { /* 66.6 ms a kernel: the host's own code */
            assert_string_equal(d.findings[0].id, "cpu_compute_bound");
            assert_false(has_finding(&d, "launch_bound"));
            assert_true(finding_says(&d.findings[0], "66.6 ms per kernel it ran: far more than launching costs"));
            assert_non_null(strstr(d.findings[0].remedies[0], "First record the host"));
            assert_false(has_remedy(&d, "cpu_compute_bound", "Use all cores"));
        } else { /* 99.9 us a kernel: within what launching costs, many kernels: launch bound as before */
            assert_string_equal(d.findings[0].id, "launch_bound");
            assert_false(has_finding(&d, "cpu_compute_bound"));
        }
        mb_diagnosis_free(&d);
        mb_gap_free(&g);
        cJSON_Delete(r.evidence);
        r.evidence = NULL;
    }
    mb_run_free(&r);
}

/* A trace's copies: the pageable share is the steps' (the stages, exposed),
 * never the whole trace's evidence "copies", which hold copies outside the
 * steps too (kineto's tb_plugin ResNet-50: 2.4% pageable beside 1.9% of all
 * copies); host<->device only, where the step table's copy part also holds
 * device-to-device copies. Here 0.25 s of pageable h2d in the steps, 0.05 s
 * of d2d, 1 s in all; the evidence says 2 s of pageable copies. The same
 * for the host's time in syncs: the steps' 0.1 s, not the trace's 0.6 s
 * (a closing synchronize is no step's). */
static void test_diagnosis_copies_in_steps(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    mb_run r;
    mb_run_init(&r);
    mb_stage c = { .name = "copy h2d pageable", .component = "copy", .direction = "h2d", .memory = "pageable",
                   .work = 1e9, .work_unit = "byte", .seconds = 0.25 };
    mb_stage d = { .name = "copy d2d", .component = "copy", .direction = "d2d", .memory = "device",
                   .work = 1e9, .work_unit = "byte", .seconds = 0.05 };
    mb_stage x = { .name = "x", .component = "other", .work = 0.7, .work_unit = "s", .seconds = 0.7 };
    mb_stage y = { .name = "sync", .component = "sync", .work = 2, .work_unit = "sync", .seconds = 0.1,
                   .exposed_seconds = 0, .has_exposed = true };
    assert_int_equal(mb_run_add_stage(&r, &y, &err), MB_OK);
    assert_int_equal(mb_run_add_stage(&r, &c, &err), MB_OK);
    assert_int_equal(mb_run_add_stage(&r, &d, &err), MB_OK);
    assert_int_equal(mb_run_add_stage(&r, &x, &err), MB_OK);
    r.total_seconds = 1;
    r.evidence = cJSON_Parse("{\"copies\":[{\"direction\":\"h2d\",\"memory\":\"pageable\",\"seconds\":2}],"
                             "\"host\":{\"sync\":{\"count\":3,\"seconds\":0.6}},"
                             "\"step\":{\"gpu_busy_share\":0.30,\"kernels_per_step\":10,\"parts\":["
                             "{\"id\":\"copy\",\"share\":0.30},{\"id\":\"host\",\"share\":0.70}]}}");
    mb_gap g;
    mb_diagnosis dg;
    assert_int_equal(mb_gap_build(&r, &f->here, &f->matching, &g, &err), MB_OK);
    assert_int_equal(mb_diagnose(&g, &f->thresholds, &f->remedies, &dg, &err), MB_OK);
    CLOSE(dg.fig.pageable_share, 0.25);
    CLOSE(dg.fig.copy_share, 0.25);
    CLOSE(dg.fig.sync_host_share, 0.1); /* the steps' two syncs, not the trace's three (0.6 s) */
    assert_true(has_finding(&dg, "copy_bound"));
    mb_diagnosis_free(&dg);
    mb_gap_free(&g);
    mb_run_free(&r);
}

static void test_thresholds_missing_key(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    build(f, data_path("gap_run.json"));
    mb_ini t;
    const char *p = scratch_file("thresholds.ini", "[gpu_compute_bound]\ngpu_utilization_min = 0.9\n");
    assert_int_equal(mb_ini_load(p, &t, &err), MB_OK);
    mb_diagnosis d;
    assert_int_equal(mb_diagnose(&f->gap, &t, &f->remedies, &d, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "[gpu_compute_bound] compute_share_min is missing"));
    mb_ini_free(&t);
}

/* ---- the command --------------------------------------------------------------------------------- */

static int gap_argv(char **out, char **errtext, ...)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = "gap";
    va_list ap;
    va_start(ap, errtext);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 15;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    return run_captured(mb_cmd_gap, argc, argv, out, errtext);
}

static void test_cmd_json_out(void **state)
{
    (void)state;
    char *out, *err;
    char path[512];
    snprintf(path, sizeof path, "%s/gap.json", scratch_dir());
    int rc = gap_argv(&out, &err, "--run", (char *)data_path("gap_run.json"), "--ceilings",
                      (char *)data_path("gap_here.json"), "--target", (char *)data_path("gap_there.json"), "--format",
                      "json", "--out", path, NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, ""); /* all of it went to --out */
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "format")->valuestring, "mlbench-gap");
    cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "stages"), 0);
    assert_string_equal(cJSON_GetObjectItem(s0, "name")->valuestring, "dataloading");
    CLOSE(cJSON_GetObjectItem(s0, "seconds_lost")->valuedouble, 72);
    CLOSE(cJSON_GetObjectItem(s0, "efficiency")->valuedouble, (2.6e10 / 85) / 2e9);
    cJSON *am = cJSON_GetObjectItem(doc, "amdahl");
    CLOSE(cJSON_GetObjectItem(am, "step_seconds_all_at_ceiling")->valuedouble, 153.2 / 100);
    cJSON *pj = cJSON_GetObjectItem(doc, "projection");
    CLOSE(cJSON_GetObjectItem(pj, "step_seconds_there")->valuedouble, 151.25 / 100);
    assert_string_equal(cJSON_GetObjectItem(pj, "bottleneck_there")->valuestring, "backward");
    cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "diagnosis"), "findings"), 0);
    assert_string_equal(cJSON_GetObjectItem(f0, "pattern")->valuestring, "data_loading_bound");
    cJSON_Delete(doc);
    free(text);
    free(out);
    free(err);
}

static void test_cmd_table_and_md(void **state)
{
    (void)state;
    char *out, *err;
    int rc = gap_argv(&out, &err, (char *)data_path("gap_run.json"), "--ceilings", (char *)data_path("gap_here.json"),
                      NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "dataloading"));
    assert_non_null(strstr(out, "no ceiling"));
    assert_non_null(strstr(out, "Data-loading bound"));
    assert_non_null(strstr(out, "720 ms")); /* 72 s lost over 100 steps */
    free(out);
    free(err);
    rc = gap_argv(&out, &err, "--run", (char *)data_path("gap_run.csv"), "--ceilings",
                  (char *)data_path("gap_here.json"), "--target", (char *)data_path("gap_gpu.ini"), "--format", "md",
                  NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "# mlbench gap"));
    assert_non_null(strstr(out, "| stage "));
    assert_non_null(strstr(out, "## Projection onto Test GPU X2 (datasheet)"));
    free(out);
    free(err);
}

static void test_cmd_errors(void **state)
{
    (void)state;
    char *out, *err;
    char path[512];
    snprintf(path, sizeof path, "%s/never.json", scratch_dir());
    /* no --run */
    assert_int_equal(gap_argv(&out, &err, "--ceilings", (char *)data_path("gap_here.json"), NULL), 2);
    assert_non_null(strstr(err, "--run"));
    free(out);
    free(err);
    /* bad format */
    assert_int_equal(gap_argv(&out, &err, "--run", (char *)data_path("gap_run.json"), "--format", "xml", NULL), 2);
    assert_non_null(strstr(err, "--format xml"));
    free(out);
    free(err);
    /* a run file that is not there; nothing written to --out */
    assert_int_equal(gap_argv(&out, &err, "--run", "/nonexistent/run.json", "--ceilings",
                              (char *)data_path("gap_here.json"), "--out", path, NULL),
                     2);
    assert_non_null(strstr(err, "/nonexistent/run.json"));
    assert_int_equal(access(path, F_OK), -1);
    free(out);
    free(err);
    /* an unknown target */
    assert_int_equal(gap_argv(&out, &err, "--run", (char *)data_path("gap_run.json"), "--ceilings",
                              (char *)data_path("gap_here.json"), "--target", "no-such-gpu", "--out", path, NULL),
                     2);
    assert_non_null(strstr(err, "no-such-gpu"));
    assert_int_equal(access(path, F_OK), -1);
    free(out);
    free(err);
    /* a malformed results file */
    const char *bad = scratch_file("bad_results.json", "{\"schema\":\"mlbench-results\",\"schema_version\":9,\"cases\":[]}");
    assert_int_equal(gap_argv(&out, &err, "--run", (char *)data_path("gap_run.json"), "--ceilings", (char *)bad, NULL), 2);
    assert_non_null(strstr(err, "schema_version"));
    free(out);
    free(err);
}

/* Without --ceilings: the newest results/<host>-*.json of the current
 * directory by started_utc, or a message saying how to make one. */
static void test_cmd_default_ceilings(void **state)
{
    (void)state;
    char *out, *err;
    char cwd[4096], dir[512], results[600], older[700], newer[700];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(dir, sizeof dir, "%s/cwd", scratch_dir());
    snprintf(results, sizeof results, "%s/results", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(chdir(dir), 0);
    int rc = gap_argv(&out, &err, "--run", (char *)data_path("gap_run.json"), NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err, "mlbench --suite"));
    free(out);
    free(err);

    assert_int_equal(mkdir(results, 0755), 0);
    char *here = read_text(data_path("gap_here.json"));
    cJSON *doc = cJSON_Parse(here);
    cJSON_ReplaceItemInObject(doc, "started_utc", cJSON_CreateString("2026-02-01T00:00:00Z"));
    char *newer_text = cJSON_Print(doc);
    snprintf(older, sizeof older, "%s/%s-2026-01-10.json", results, mb_hostname());
    snprintf(newer, sizeof newer, "%s/%s-a-name-that-sorts-first.json", results, mb_hostname());
    FILE *fo = fopen(older, "w"), *fn = fopen(newer, "w");
    fputs(here, fo);
    fputs(newer_text, fn);
    fclose(fo);
    fclose(fn);
    rc = gap_argv(&out, &err, "--run", (char *)data_path("gap_run.json"), "--format", "json", NULL);
    assert_int_equal(rc, 0);
    cJSON *res = cJSON_Parse(out);
    const char *used = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "ceilings"), "path")->valuestring;
    assert_non_null(strstr(used, "a-name-that-sorts-first"));
    cJSON_Delete(res);
    cJSON_Delete(doc);
    free(newer_text);
    free(here);
    free(out);
    free(err);
    assert_int_equal(chdir(cwd), 0);
}

static int group_teardown(void **state)
{
    fx_teardown(state);
    rm_scratch();
    return 0;
}

/* ---- the headline, roles, op (issue 17) ------------------------------------------------ */

/* The headline ranks every stage by exposed time: a stage with no ceiling
 * that dominates the step comes first, with what would bound it; the share
 * of the step with a ceiling is said. decode 8 s (other, role data),
 * forward 2 s of bf16 GEMM at 300 TFLOP/s against the 8192^3 ceiling of
 * 600: 1 s lost. Bounded: 2 / 10. */
static void test_headline_unbounded_first(void **state)
{
    fx *f = *state;
    build(f, scratch_file("headline.json",
                          "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["
                          "{\"name\":\"forward\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":6e14,"
                          "\"calls\":1,\"seconds\":2},"
                          "{\"name\":\"decode\",\"component\":\"other\",\"role\":\"data\",\"seconds\":8}]}"));
    const mb_gap *g = &f->gap;
    assert_string_equal(g->stages[g->headline[0]].stage->name, "decode");
    assert_string_equal(g->stages[g->headline[1]].stage->name, "forward");
    CLOSE(g->bounded_share, 0.2);
    assert_int_equal(stage(g, "decode")->match, -1);
    assert_non_null(strstr(stage(g, "decode")->bound_hint, "time only"));
    assert_string_equal(stage(g, "forward")->bound_hint, "");
    CLOSE(stage(g, "forward")->time_lost, 1);
    /* the time-lost ranking still holds only forward; the headline both */
    assert_string_equal(g->stages[g->ranking[0]].stage->name, "forward");
    /* role data decides data loading (no name needed), and no name note */
    assert_int_equal(f->diag.n, 1);
    assert_string_equal(f->diag.findings[0].id, "data_loading_bound");
    CLOSE(f->diag.fig.data_share, 0.8);
    assert_int_equal(f->diag.n_notes, 0);
    /* the JSON carries it in the same order with the same shares */
    cJSON *doc = mb_gap_to_json(g, &f->diag);
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(doc, "headline");
    CLOSE(cJSON_GetObjectItemCaseSensitive(head, "bounded_share")->valuedouble, 0.2);
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(head, "stages"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(first, "name")->valuestring, "decode");
    CLOSE(cJSON_GetObjectItemCaseSensitive(first, "share")->valuedouble, 0.8);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(first, "no_ceiling")));
    cJSON_Delete(doc);
}

/* The headline text: the dominant stage first, the bounded share, every
 * line within 120 columns (notes wrapped, not cut). */
static void test_headline_text_fits(void **state)
{
    fx *f = *state;
    build(f, data_path("gap_run.json"));
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    mb_err err = { 0 };
    assert_int_equal(mb_gap_write(o, &f->gap, &f->diag, "table", &err), MB_OK);
    fclose(o);
    const char *h = strstr(buf, "what the step is made of");
    assert_non_null(h);
    /* dataloading (85 s of the 300) is the largest stage */
    const char *first = strstr(h, "1. ");
    assert_non_null(first);
    assert_memory_equal(first, "1. dataloading", 14);
    assert_non_null(strstr(h, "of the step has a ceiling"));
    assert_true(widest_line(buf) <= MB_TEXT_COLS);
    /* one time format: no "0.000..." seconds, no "e-0" exponents */
    assert_null(strstr(buf, "e-0"));
    free(buf);
}

/* A memset is a write: a membw stage with op write takes the write case,
 * not the preferred copy. */
static void test_membw_op_write(void **state)
{
    fx *f = *state;
    mb_err err = { 0 };
    const char *res = scratch_file(
        "membw.json",
        "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
        "\"context\":{\"host\":{\"name\":\"gpubox\"},\"gpus\":[{\"name\":\"G\"}]},\"cases\":["
        "{\"id\":\"membw/cuda/op=copy\",\"component\":\"membw\",\"backend\":\"cuda\",\"params\":{\"op\":\"copy\"},"
        "\"status\":\"ok\",\"work_unit\":\"byte\",\"work_per_iteration\":1e9,\"rate_unit\":\"GB/s\","
        "\"rate_scale\":1e9,\"rate\":{\"median\":3000},\"verification\":{\"status\":\"passed\"}},"
        "{\"id\":\"membw/cuda/op=write\",\"component\":\"membw\",\"backend\":\"cuda\",\"params\":{\"op\":\"write\"},"
        "\"status\":\"ok\",\"work_unit\":\"byte\",\"work_per_iteration\":1e9,\"rate_unit\":\"GB/s\","
        "\"rate_scale\":1e9,\"rate\":{\"median\":2500},\"verification\":{\"status\":\"passed\"}}]}");
    mb_ceilings c;
    assert_int_equal(mb_ceilings_load(res, &c, &err), MB_OK);
    const char *run = scratch_file("memset.json",
                                   "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                   "{\"name\":\"zero\",\"component\":\"membw\",\"op\":\"write\",\"bytes\":1e9,"
                                   "\"seconds\":1},"
                                   "{\"name\":\"move\",\"component\":\"membw\",\"bytes\":1e9,\"seconds\":1}]}");
    mb_run r;
    mb_gap g;
    assert_int_equal(mb_run_read(run, &r, &err), MB_OK);
    assert_int_equal(mb_gap_build(&r, &c, &f->matching, &g, &err), MB_OK);
    assert_string_equal(c.cases[g.stages[0].match].id, "membw/cuda/op=write");
    CLOSE(g.stages[0].ceiling_rate, 2500e9);
    assert_string_equal(c.cases[g.stages[1].match].id, "membw/cuda/op=copy"); /* no op: copy preferred */
    mb_gap_free(&g);
    mb_run_free(&r);
    mb_ceilings_free(&c);
    /* an op on another component is refused, as is an unknown op */
    const char *bad = scratch_file("badop.json", "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                                                 "{\"name\":\"x\",\"component\":\"disk\",\"pattern\":\"random\","
                                                 "\"op\":\"write\",\"bytes\":1,\"seconds\":1}]}");
    assert_int_equal(mb_run_read(bad, &r, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "only membw stages have an op"));
}

/* A trace's attention stage, its FLOPs from the SDPA op's query/key shapes
 * (causal: 4 b h l s d / 2 = 67108864 for [2,4,256,64] bf16, 20 us) and its
 * backward op's from the forward (10/4 of it, 167772160, 40 us), has no
 * benchmark: it is held against the GEMM case of its dtype, bf16, the
 * nearest in size per call (117440512 FLOPs per kernel: the 1024^3 case,
 * 300 TFLOP/s), and the explanation says so. A backward matmul that no
 * forward op gives FLOPs is told what the trace lacks, not to record
 * shapes it recorded; a trace without shapes is. */
static void test_trace_attention_and_hints(void **state)
{
    fx *f = *state;
#define OP(name, tid, ts, dur, args)                                                                     \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts  \
    ",\"dur\":" #dur ",\"args\":{" args "}},"
#define LAUNCH(tid, ts, corr)                                                                            \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":" #tid       \
    ",\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}},"
#define KERNEL(name, ts, dur, corr)                                                                      \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts            \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}}"
    const char *text =
        "{\"record_shapes\":1,\"traceEvents\":["
        OP("aten::_scaled_dot_product_flash_attention", 1, 10, 80,
           "\"Sequence number\":31,\"Fwd thread id\":0,"
           "\"Input Dims\":[[2,4,256,64],[2,4,256,64],[2,4,256,64],[],[],[],[]],"
           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\","
           "\"Scalar\",\"\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"0.\",\"True\",\"False\",\"\"]")
        LAUNCH(1, 20, 43)
        OP("ScaledDotProductFlashAttentionBackward0", 2, 3005, 190, "\"Sequence number\":31,\"Fwd thread id\":1")
        OP("aten::_scaled_dot_product_flash_attention_backward", 2, 3010, 180, "\"External id\":7")
        LAUNCH(2, 3020, 49)
        OP("MmBackward0", 2, 4005, 190, "\"Sequence number\":99,\"Fwd thread id\":1")
        OP("aten::mm", 2, 4010, 40, "\"External id\":8")
        LAUNCH(2, 4020, 50)
        KERNEL("flash_fwd_kernel<Flash_fwd_kernel_traits<64>>", 5030, 20, 43) ","
        KERNEL("flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits<64>>", 5130, 40, 49) ","
        KERNEL("ampere_bf16_s16816gemm_bf16_64x64", 5180, 4, 50) "]}";
    build(f, scratch_file("attention.json", text));
    const mb_gap_stage *st = stage(&f->gap, "attention");
    assert_string_equal(st->stage->component, "attention");
    assert_string_equal(matched_id(f, st), "gemm/cublaslt/dtype=bf16,k=1024,m=1024,n=1024");
    CLOSE(st->measured_rate, 234881024.0 / 60e-6);
    CLOSE(st->ceiling_rate, 300e12);
    assert_non_null(strstr(st->why, "gemm/cublaslt/dtype=bf16,k=1024,m=1024,n=1024: no attention benchmark: held "
                                    "against the GEMM case of its dtype; dtype bf16;"));
    st = stage(&f->gap, "gemm");
    assert_int_equal(st->match, -1);
    assert_string_equal(st->bound_hint,
                        "FLOPs unknown: launched by aten::mm: no Input Dims recorded for it, and no forward op with "
                        "shapes has its autograd node's Sequence number");
    /* the same kernels without any shapes in the trace */
    const char *bare =
        "{\"record_shapes\":0,\"traceEvents\":["
        OP("aten::mm", 2, 4010, 40, "\"External id\":8")
        LAUNCH(2, 4020, 50)
        KERNEL("ampere_bf16_s16816gemm_bf16_64x64", 5180, 4, 50) "]}";
    build(f, scratch_file("noshapes.json", bare));
    assert_string_equal(stage(&f->gap, "gemm")->bound_hint,
                        "FLOPs unknown: shapes not recorded: profile with record_shapes=True");
#undef OP
#undef LAUNCH
#undef KERNEL
}

/* A stage's name never decides silently: a dominant 'other' stage with no
 * role is a finding, not "balanced"; role checkpoint names the periodic
 * pattern (and a disk stage with that role is not data loading); a name
 * used as a data-loading hint is said in a note. */
static void test_roles_decide_not_names(void **state)
{
    fx *f = *state;
    build(f, scratch_file("ckpt_other.json",
                          "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                          "{\"name\":\"checkpoint_save\",\"component\":\"other\",\"seconds\":75},"
                          "{\"name\":\"fetch_batch\",\"component\":\"other\",\"seconds\":5},"
                          "{\"name\":\"forward\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":1.2e16,"
                          "\"seconds\":20}]}"));
    assert_true(f->diag.n >= 1);
    assert_string_equal(f->diag.findings[0].id, "unattributed_time");
    CLOSE(f->diag.findings[0].weight, 0.75);
    CLOSE(f->diag.fig.data_share, 0.05); /* fetch_batch, by its name ... */
    assert_int_equal(f->diag.n_notes, 1); /* ... said in a note */
    assert_non_null(strstr(f->diag.notes[0], "fetch_batch"));
    assert_non_null(strstr(f->diag.notes[0], "from its name"));

    build(f, scratch_file("ckpt_role.json",
                          "{\"format\":\"mlbench-stages\",\"version\":1,\"stages\":["
                          "{\"name\":\"save\",\"component\":\"disk\",\"pattern\":\"sequential\",\"role\":\"checkpoint\","
                          "\"bytes\":1e10,\"seconds\":75},"
                          "{\"name\":\"fetch_batch\",\"component\":\"other\",\"role\":\"eval\",\"seconds\":5},"
                          "{\"name\":\"forward\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":1.2e16,"
                          "\"seconds\":20}]}"));
    assert_string_equal(f->diag.findings[0].id, "periodic_work_bound");
    CLOSE(f->diag.fig.periodic_share, 0.8);
    assert_string_equal(stage(&f->gap, "save")->stage->role, "checkpoint");
    CLOSE(f->diag.fig.data_share, 0); /* neither the disk stage nor the name counts as data */
    assert_int_equal(f->diag.n_notes, 0);
    for (int i = 0; i < f->diag.n; i++)
        assert_string_not_equal(f->diag.findings[i].id, "data_loading_bound");

    /* the CSV form carries role and op as columns; an unknown role is refused */
    build(f, scratch_file("roles.csv", "# mlbench-stages version 1\n"
                                       "name,component,role,op,bytes,seconds\n"
                                       "decode,other,data,,,8\n"
                                       "zero,membw,,write,1e9,2\n"));
    assert_string_equal(stage(&f->gap, "decode")->stage->role, "data");
    assert_string_equal(stage(&f->gap, "zero")->stage->op, "write");
    CLOSE(f->diag.fig.data_share, 0.8);
    mb_run r;
    mb_err err = { 0 };
    assert_int_equal(mb_run_read(scratch_file("badrole.csv", "# mlbench-stages version 1\nname,component,role,seconds\n"
                                                             "x,other,training,1\n"),
                                 &r, &err),
                     MB_EUSAGE);
    assert_non_null(strstr(err.msg, "role"));
}

/* One time format, 3 significant digits, the unit chosen after rounding. */
static void test_fmt_seconds(void **state)
{
    (void)state;
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        { 0.00865, "8.65 ms" }, { 7.02e-05, "70.2 \u00b5s" }, { 0.99966, "1 s" }, { 0.0009997, "1 ms" },
        { 12.345, "12.3 s" },   { 1234.4, "1234 s" },          { 5e-9, "5 ns" },   { 0, "0 s" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[32];
        mb_fmt_seconds(buf, sizeof buf, cases[i].s);
        assert_string_equal(buf, cases[i].want);
    }
}

/* did you mean: the nearest name by edit distance, only when it is a likely
 * typo (at most 2 edits, under half the word). */
static void test_did_you_mean(void **state)
{
    (void)state;
    const char *subs = "list, report, gap, compare, trace, run";
    char near[64];
    assert_true(mb_did_you_mean("repot", subs, near, sizeof near));
    assert_string_equal(near, "report");
    assert_true(mb_did_you_mean("comapre", subs, near, sizeof near)); /* a swap is 2 edits */
    assert_string_equal(near, "compare");
    assert_true(mb_did_you_mean("GAPP", subs, near, sizeof near)); /* case-insensitive */
    assert_string_equal(near, "gap");
    assert_false(mb_did_you_mean("zzzzzz", subs, near, sizeof near));
    assert_false(mb_did_you_mean("ga", "gap, gemm", near, sizeof near) && strcmp(near, "gemm") == 0);
    assert_false(mb_did_you_mean("x", subs, near, sizeof near)); /* 1 edit of a 1-letter word is no typo */
    assert_false(mb_did_you_mean("report", subs, near, sizeof near)); /* an exact name needs no guess */
    assert_true(mb_did_you_mean("gemn", "all, gemm, gemm-cpu, gemm-gpu", near, sizeof near));
    assert_string_equal(near, "gemm");
}

/* The gap page shows the same three levels: a table with the text's figures
 * and verdicts, and a grouped bar per stage (no ceiling bar where there is no
 * ceiling). */
static void levels_html(const mb_gap *g, const mb_diagnosis *d)
{
    char *page = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&page, &len);
    assert_non_null(m);
    mb_err err = {0};
    assert_int_equal(mb_gap_html(m, g, d, &err), MB_OK);
    fclose(m);
    const char *lv = strstr(page, "<h2>Three levels per stage (simplify)</h2>");
    assert_non_null(lv);
    assert_non_null(strstr(lv, "<table class=\"levels\">"));
    /* load: 1 s at the 2 GB/s ceiling, 2 s alone, 4 s in the loop, 3 s exposed */
    char row[512], c[32];
    mb_fmt_seconds(c, sizeof c, g->stages[0].time_at_ceiling);
    snprintf(row, sizeof row,
             "<tr><td>load</td><td class=\"n\">%s</td><td class=\"n\">2 s</td><td class=\"n\">4 s</td>"
             "<td class=\"n\">1 GB/s</td><td class=\"n\">500 MB/s</td><td class=\"n\">3 s</td>"
             "<td class=\"verdict\" data-verdict=\"%d\">slow only in the pipeline</td></tr>",
             c, MB_VERDICT_PIPELINE);
    assert_non_null(strstr(lv, row));
    assert_non_null(strstr(lv, ">slow by itself</td>"));
    assert_non_null(strstr(lv, ">hidden by overlap</td>"));
    assert_non_null(strstr(lv, "<td>opt</td><td class=\"n\">no ceiling</td>"));
    assert_null(strstr(lv, "<td>plain</td>")); /* no isolated time, no row */
    /* the chart: 7 stages x 3 levels, less the 4 ceilings hid, opt, tiny and inline lack */
    const char *chart = strstr(lv, "data-chart=\"levels\"");
    assert_non_null(chart);
    const char *end = strstr(chart, "</svg>");
    assert_non_null(end);
    int bars = 0;
    for (const char *p = strstr(chart, "<rect class=\"bar\""); p && p < end; p = strstr(p + 1, "<rect class=\"bar\""))
        bars++;
    assert_int_equal(bars, 7 * 3 - 4);
    assert_non_null(strstr(chart, "hardware ceiling"));
    /* in the loop, each bar is what the step waits for: hid's 10 ms exposed, not the 1 s it takes beside the
     * step (a loader with workers: the whole step) */
    assert_non_null(strstr(chart, "hid in the full loop, waited for: 10 ms per step (hidden by overlap)"));
    assert_non_null(strstr(chart, "load in the full loop, waited for: 3 s per step"));
    assert_null(strstr(chart, "hid in the full loop, waited for: 1 s"));
    free(page);
}

/* Stage files version 2: three levels per stage and which gap is which
 * (mb_gap_stage_levels), known answers against gap_here.json's disk random
 * (2 GB/s) and bf16 GEMM (600 TFLOP/s) ceilings. */
static void test_levels_known_answers(void **state)
{
    fx *f = *state;
    const char *p = scratch_file(
        "levels.json",
        "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":1,\"total_seconds\":10},"
        "\"stages\":["
        "{\"name\":\"load\",\"component\":\"disk\",\"pattern\":\"random\",\"block_size\":131072,"
        "\"bytes\":2e9,\"seconds\":4,\"exposed_seconds\":3,\"isolated_seconds\":2},"
        "{\"name\":\"fwd\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":6e14,\"seconds\":1.1,"
        "\"isolated_seconds\":1.05},"
        "{\"name\":\"mm\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":6e14,\"seconds\":4,"
        "\"isolated_seconds\":3.9},"
        "{\"name\":\"hid\",\"component\":\"other\",\"seconds\":1,\"exposed_seconds\":0.01,"
        "\"isolated_seconds\":2},"
        "{\"name\":\"opt\",\"component\":\"other\",\"seconds\":1,\"isolated_seconds\":1},"
        "{\"name\":\"plain\",\"component\":\"other\",\"seconds\":0.5},"
        "{\"name\":\"tiny\",\"component\":\"other\",\"seconds\":0.005,\"exposed_seconds\":0.005,"
        "\"isolated_seconds\":0.001},"
        "{\"name\":\"inline\",\"component\":\"other\",\"seconds\":0.2,\"exposed_seconds\":0.2,"
        "\"isolated_seconds\":2}],"
        "\"simplify\":{\"complete\":true}}");
    build(f, p);
    assert_true(mb_gap_has_levels(&f->gap));
    const mb_gap *g = &f->gap;
    mb_gap_levels L = mb_gap_stage_levels(g, 0, 0.10);
    assert_true(L.has_levels && L.has_ceiling);
    assert_true(fabs(L.ceiling_seconds - 2e9 / g->stages[0].ceiling_rate) < 1e-9);
    CLOSE(L.isolated_rate, 1e9);
    CLOSE(L.loop_rate, 5e8);
    CLOSE(L.pipeline_gap, (4 - 2) * 0.75); /* the loop's extra 2 s, 3 of its 4 s exposed */
    CLOSE(L.self_gap, 2 - L.ceiling_seconds);
    assert_int_equal(L.verdict, MB_VERDICT_PIPELINE);
    assert_string_equal(L.verdict_text, "slow only in the pipeline");
    L = mb_gap_stage_levels(g, 1, 0.10); /* 600 TFLOP/s: 1 s at the ceiling, 1.05 alone, 1.1 in the loop */
    CLOSE(L.ceiling_seconds, 1.0);
    assert_int_equal(L.verdict, MB_VERDICT_AT_CEILING);
    L = mb_gap_stage_levels(g, 2, 0.10);
    CLOSE(L.self_gap, 2.9);
    assert_int_equal(L.verdict, MB_VERDICT_ITSELF);
    assert_string_equal(L.verdict_text, "slow by itself");
    L = mb_gap_stage_levels(g, 3, 0.10);
    assert_int_equal(L.verdict, MB_VERDICT_HIDDEN);
    L = mb_gap_stage_levels(g, 4, 0.10);
    assert_false(L.has_ceiling);
    assert_int_equal(L.verdict, MB_VERDICT_AS_ALONE);
    assert_false(mb_gap_stage_levels(g, 5, 0.10).has_levels);
    /* a loader without workers: 5 ms of a 10 s run waited for, 5x its time alone: too small to call a gap */
    L = mb_gap_stage_levels(g, 6, 0.10);
    assert_int_equal(L.verdict, MB_VERDICT_NEGLIGIBLE);
    assert_string_equal(L.verdict_text, "negligible (under 1% of the step)");
    /* an inline part (the step waits for all of its 0.2 s) ten times slower alone: no overlap hid it; the
     * isolated figure is off (dcgan's optimizer: 151 ms alone by subtraction, 15.9 ms in the loop) */
    L = mb_gap_stage_levels(g, 7, 0.10);
    assert_int_equal(L.verdict, MB_VERDICT_UNSTEADY);
    /* JSON: the levels per stage, null without an isolated time */
    cJSON *doc = mb_gap_to_json(g, &f->diag);
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(doc, "stages");
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, 0), "levels");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(lv, "verdict")->valuestring, "slow only in the pipeline");
    CLOSE(cJSON_GetObjectItemCaseSensitive(lv, "isolated_seconds_per_step")->valuedouble, 2);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, 5), "levels")));
    cJSON_Delete(doc);
    levels_html(g, &f->diag);
}

/* A part slower alone than in the full loop (the machine was busier while it
 * ran alone, as a simplify run on a shared 2-core box gave: forward+backward
 * 97.5 ms alone, 52.1 ms in the loop): neither gap is called. */
static void test_levels_unsteady(void **state)
{
    fx *f = *state;
    const char *p = scratch_file("levels_unsteady.json",
                                 "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":1},\"stages\":["
                                 "{\"name\":\"fwd\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops\":6e14,"
                                 "\"seconds\":1.5,\"isolated_seconds\":3},"
                                 "{\"name\":\"opt\",\"component\":\"other\",\"seconds\":1,\"isolated_seconds\":1.09}]}");
    build(f, p);
    mb_gap_levels L = mb_gap_stage_levels(&f->gap, 0, MB_LEVELS_TOLERANCE);
    assert_int_equal(L.verdict, MB_VERDICT_UNSTEADY);
    assert_string_equal(L.verdict_text, "slower alone: re-measure");
    L = mb_gap_stage_levels(&f->gap, 1, MB_LEVELS_TOLERANCE); /* 9% slower alone: within the tolerance */
    assert_int_equal(L.verdict, MB_VERDICT_AS_ALONE);
}

/* A part slower in the loop than alone that the step hardly waits for (a
 * loader's workers beside a step that their CPU slows: an ImageFolder's
 * loader 70 ms a batch alone, the step's 112 ms in the loop, 9 ms of it
 * waited for): neither gap holds, and "as fast as alone" it was not. */
static void test_levels_little_waited(void **state)
{
    fx *f = *state;
    const char *p = scratch_file("levels_little_waited.json",
                                 "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":1},\"stages\":["
                                 "{\"name\":\"loader\",\"component\":\"other\",\"role\":\"data\",\"seconds\":1.6,"
                                 "\"exposed_seconds\":0.1,\"isolated_seconds\":1},"
                                 "{\"name\":\"step\",\"component\":\"other\",\"seconds\":1.5,"
                                 "\"isolated_seconds\":1.5},"
                                 "{\"name\":\"near\",\"component\":\"other\",\"seconds\":0.2,"
                                 "\"isolated_seconds\":0.19},"
                                 "{\"name\":\"ops\",\"component\":\"other\",\"seconds\":0.157,"
                                 "\"isolated_seconds\":0.142}]}");
    build(f, p);
    /* 0.6 s more in the loop, 0.1 of its 1.6 s waited for: 0.0375 s, under a tenth of 1.6 s; 0.1 of the run's
     * 1.957 s exposed: not hidden (5%), not negligible (1%) */
    mb_gap_levels L = mb_gap_stage_levels(&f->gap, 0, MB_LEVELS_TOLERANCE);
    CLOSE(L.pipeline_gap, 0.6 * 0.1 / 1.6);
    assert_int_equal(L.verdict, MB_VERDICT_LITTLE_WAITED);
    assert_string_equal(L.verdict_text, "slower in the loop, little waited for");
    L = mb_gap_stage_levels(&f->gap, 1, MB_LEVELS_TOLERANCE);
    assert_int_equal(L.verdict, MB_VERDICT_AS_ALONE);
    L = mb_gap_stage_levels(&f->gap, 2, MB_LEVELS_TOLERANCE); /* 5% longer in the loop: as fast as alone */
    assert_int_equal(L.verdict, MB_VERDICT_AS_ALONE);
    /* 15.7 ms in the loop, 14.2 alone, all waited for: 1.5 ms, under a tenth of 15.7: no gap, and not "little
     * waited for" */
    L = mb_gap_stage_levels(&f->gap, 3, MB_LEVELS_TOLERANCE);
    assert_int_equal(L.verdict, MB_VERDICT_AS_ALONE);
    char legend[640];
    mb_gap_levels_legend(legend, sizeof legend);
    assert_non_null(strstr(legend, "slower in the loop, little waited for: more than 10% longer in the loop"));
    assert_true(strlen(legend) < sizeof legend - 1);
}

/* A simplify loader with no workers, 1.4x slower in the loop than alone
 * and waited for whole: its note says no worker contends with it and what
 * in its own process may; with 2 workers, or the count unknown, no note. */
static void test_levels_inline_loader(void **state)
{
    fx *f = *state;
    static const char run[] =
        "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":1},\"stages\":["
        "{\"name\":\"data loading\",\"component\":\"other\",\"role\":\"data\",\"seconds\":1.4,"
        "\"isolated_seconds\":1},"
        "{\"name\":\"step\",\"component\":\"other\",\"seconds\":1,\"isolated_seconds\":1}],"
        "\"simplify\":{\"complete\":true,\"data_loading\":{%s\"cache\":\"warm\"}}}";
    static const struct {
        const char *workers;
        bool said;
    } cases[] = { { "\"workers\":0,", true }, { "\"workers\":2,", false }, { "", false } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        snprintf(text, sizeof text, run, cases[i].workers);
        build(f, scratch_file("levels_inline.json", text));
        mb_gap_levels L = mb_gap_stage_levels(&f->gap, 0, MB_LEVELS_TOLERANCE);
        assert_int_equal(L.verdict, MB_VERDICT_PIPELINE);
        bool said = false;
        for (int k = 0; k < f->gap.n_notes; k++)
            said = said || strstr(f->gap.notes[k], "data loading has no workers (num_workers=0) and takes 1.40x its "
                                                   "time alone in the loop: no worker contends with it") != NULL;
        if (said != cases[i].said)
            fail_msg("case %zu: the no-worker note %s", i, said ? "said" : "not said");
    }
}

/* A part that did other work alone than in the loop (a loader whose loop
 * the page cache served more: 248 MB a step against 289 MB a batch alone):
 * each rate from its own bytes, the gaps for the loop's bytes at the rate
 * alone. 250 MB in 0.172 s in the loop, 290 MB in 0.2 s alone: at 1.45 GB/s
 * the loop's bytes take 0.1724 s, as long as in the loop: not "slower alone"
 * (0.2 s against 0.172 s, 16% slower, when its work was taken as the
 * loop's): slow by itself against the fixture's disk. The work alone in another unit, or without a time alone, is an
 * error naming the key. */
static void test_levels_isolated_work(void **state)
{
    fx *f = *state;
    const char *p = scratch_file("levels_work.json",
                                 "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":1},\"stages\":["
                                 "{\"name\":\"data loading\",\"component\":\"other\",\"seconds\":0.172,"
                                 "\"isolated_seconds\":0.2},"
                                 "{\"name\":\"read\",\"component\":\"disk\",\"pattern\":\"random\",\"bytes\":2.5e8,"
                                 "\"seconds\":0.172,\"isolated_seconds\":0.2,\"isolated_bytes\":2.9e8},"
                                 "{\"name\":\"read2\",\"component\":\"disk\",\"pattern\":\"random\",\"bytes\":2.5e8,"
                                 "\"seconds\":0.172,\"isolated_seconds\":0.2,\"isolated_bytes\":2.7e8}]}");
    build(f, p);
    mb_gap_levels L = mb_gap_stage_levels(&f->gap, 0, MB_LEVELS_TOLERANCE);
    assert_int_equal(L.verdict, MB_VERDICT_UNSTEADY); /* the same work, 16% slower alone */
    L = mb_gap_stage_levels(&f->gap, 1, MB_LEVELS_TOLERANCE);
    CLOSE(L.isolated_rate, 2.9e8 / 0.2);
    CLOSE(L.loop_rate, 2.5e8 / 0.172);
    CLOSE(L.isolated_seconds, 0.2); /* the time alone as measured */
    assert_true(L.has_ceiling);      /* the fixture's random reads: far from them, alone as in the loop */
    CLOSE(L.self_gap, 2.5e8 / (2.9e8 / 0.2) - L.ceiling_seconds);
    CLOSE(L.pipeline_gap, 0);
    assert_int_equal(L.verdict, MB_VERDICT_ITSELF);
    assert_true(L.other_work);
    char note[512];
    assert_true(mb_gap_levels_work_note(&f->gap, 1, &L, note, sizeof note));
    assert_string_equal(note, "read did other work alone: 290 MB per step alone, 250 MB in the loop; at its rate alone "
                              "the loop's 250 MB take 172 ms, the time its verdict compares");
    L = mb_gap_stage_levels(&f->gap, 0, MB_LEVELS_TOLERANCE);
    assert_false(mb_gap_levels_work_note(&f->gap, 0, &L, note, sizeof note)); /* its own work: no note */
    /* 8% more bytes alone, within the levels' tolerance: the same work, its
     * time alone as measured (unsteady: 16% slower alone), and no note */
    L = mb_gap_stage_levels(&f->gap, 2, MB_LEVELS_TOLERANCE);
    assert_false(L.other_work);
    CLOSE(L.isolated_rate, 2.7e8 / 0.2);
    CLOSE(L.alone_for_loop_seconds, 0.2);
    assert_int_equal(L.verdict, MB_VERDICT_UNSTEADY);
    assert_false(mb_gap_levels_work_note(&f->gap, 2, &L, note, sizeof note));

    mb_run r;
    mb_err err = { 0 };
    static const char *const bad[][2] = {
        { "{\"name\":\"r\",\"component\":\"disk\",\"pattern\":\"random\",\"bytes\":1e8,\"seconds\":1,"
          "\"isolated_seconds\":1,\"isolated_flops\":1e9}",
          "isolated_flops" },
        { "{\"name\":\"r\",\"component\":\"disk\",\"pattern\":\"random\",\"bytes\":1e8,\"seconds\":1,"
          "\"isolated_bytes\":1e9}",
          "needs the time alone" },
    };
    char text[512], name[32];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "{\"format\":\"mlbench-stages\",\"version\":2,\"stages\":[%s]}", bad[i][0]);
        snprintf(name, sizeof name, "levels_work_bad%zu.json", i);
        err = (mb_err){ 0 };
        assert_int_equal(mb_run_read(scratch_file(name, text), &r, &err), MB_EUSAGE);
        assert_non_null(strstr(err.msg, bad[i][1]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers_json),
        cmocka_unit_test(test_levels_isolated_work),
        cmocka_unit_test(test_known_answers_csv),
        cmocka_unit_test(test_match_reasons),
        cmocka_unit_test(test_project_results),
        cmocka_unit_test(test_project_datasheet),
        cmocka_unit_test(test_gpu_stage_on_cpu_results),
        cmocka_unit_test(test_cpu_gemm_best_library),
        cmocka_unit_test(test_disk_sqpoll_faster_wins),
        cmocka_unit_test(test_tie_prefers_a_case_not_noisy),
        cmocka_unit_test(test_collective_busbw),
        cmocka_unit_test(test_nearest_size_and_dtype),
        cmocka_unit_test(test_nearest_size_per_call),
        cmocka_unit_test(test_copy_fixed_cost),
        cmocka_unit_test(test_membw_kernel_floor),
        cmocka_unit_test(test_above_ceiling),
        cmocka_unit_test(test_beyond_nearest_case),
        cmocka_unit_test(test_diagnosis_simplify_loader),
        cmocka_unit_test(test_needed_reads_one_at_a_time),
        cmocka_unit_test(test_levels_inline_loader),
        cmocka_unit_test(test_stage_file_exposed),
        cmocka_unit_test(test_diagnosis_step_table),
        cmocka_unit_test(test_diagnosis_copies_in_steps),
        cmocka_unit_test(test_diagnosis_data_loading),
        cmocka_unit_test(test_diagnosis_launch_bound), cmocka_unit_test(test_diagnosis_launch_remedies_by_trace),
        cmocka_unit_test(test_diagnosis_compute_optimizer_remedy),
        cmocka_unit_test(test_diagnosis_host_unrecorded),
        cmocka_unit_test(test_diagnosis_setup),
        cmocka_unit_test(test_diagnosis_comm_kind),
        cmocka_unit_test(test_diagnosis_host_time_per_op),
        cmocka_unit_test(test_diagnosis_host_time_per_kernel),
        cmocka_unit_test(test_diagnosis_sync_bound),
        cmocka_unit_test(test_diagnosis_gpu_compute_bound),
        cmocka_unit_test(test_diagnosis_cpu_bound_and_copies),
        cmocka_unit_test(test_diagnosis_none),
        cmocka_unit_test(test_diagnosis_trace_evidence),
        cmocka_unit_test(test_thresholds_missing_key),
        cmocka_unit_test(test_cmd_json_out),
        cmocka_unit_test(test_cmd_table_and_md),
        cmocka_unit_test(test_cmd_errors),
        cmocka_unit_test(test_cmd_default_ceilings),
        cmocka_unit_test(test_headline_unbounded_first),
        cmocka_unit_test(test_headline_text_fits),
        cmocka_unit_test(test_membw_op_write),
        cmocka_unit_test(test_trace_attention_and_hints),
        cmocka_unit_test(test_roles_decide_not_names),
        cmocka_unit_test(test_fmt_seconds),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test_setup_teardown(test_levels_known_answers, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_levels_unsteady, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_levels_little_waited, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_project_like_for_like, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_copy_between_sizes, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, fx_setup, group_teardown);
}
