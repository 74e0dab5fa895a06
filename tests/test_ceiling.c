/* test_ceiling.c: one ceiling per case (results.h mb_case_ceiling), the
 * noise rule (mb_noise_judge) with known answers, and the same number in
 * every reader: the writers, the HTML page, --baseline and the analysis
 * (ceilings.c). The script test report_views.sh checks the same on real
 * results files through the binary. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "format.h"
#include "baseline.h"
#include "params.h"
#include "suite.h"
#include "ceilings.h"
#include "results_page.h"
#include "results.h"
#include "vocabulary.h"
#include "text_test_util.h"
#include "results_writers.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

/* ---- the noise rule ----------------------------------------------------------- */

static bool judge(double cv, double max_cv, double median, double burst, double sustained, char *why, size_t len)
{
    mb_noise_in in = { .cv = cv, .max_cv = max_cv, .repetitions = 5, .median = median, .burst = burst,
                       .sustained = sustained };
    return mb_noise_judge(&in, why, len);
}

static void test_noise_rule(void **s)
{
    (void)s;
    char why[512];
    /* the allowance: max(3 x cv, 5%) */
    CLOSE(mb_noise_allowance(0.001), 0.05);
    CLOSE(mb_noise_allowance(0.10), 0.30);
    CLOSE(mb_noise_allowance(NAN), 0.05);
    /* the CPU GEMM: median 154.3, sustained 175.7 (13.9% apart), cv 2%: allowance 6% -> noisy */
    assert_true(judge(0.02, 0.10, 154.3, 170.0, 175.7, why, sizeof why));
    assert_non_null(strstr(why, "differ by 13.9%"));
    assert_non_null(strstr(why, "6.0%"));
    /* 4% apart with cv 1%: within the 5% floor */
    assert_false(judge(0.01, 0.10, 100, 110, 104, why, sizeof why));
    assert_string_equal(why, "");
    /* sustained 11.1% above burst with cv 1%: a long run cannot beat a short one -> noise */
    assert_true(judge(0.01, 0.10, 100, 90, 100, why, sizeof why));
    assert_non_null(strstr(why, "11.1% above burst"));
    /* the same spreads (12%) pass when the repetitions' own cv is 5% (allowance 15%) */
    assert_false(judge(0.05, 0.10, 100, 100, 112, NULL, 0));
    /* a GPU at its power cap: burst 787 far above sustained 673 = median is real, not noise */
    assert_false(judge(0.01, 0.10, 673, 787, 673, NULL, 0));
    /* cv 33.4% (the H100 reference's bf16 oneDNN conv) over max_cv 10% */
    assert_true(judge(0.334, 0.10, 10976, NAN, NAN, why, sizeof why));
    assert_non_null(strstr(why, "cv 33.4% > max_cv 10.0%"));
    /* no check asked (max_cv 0), no phases: nothing to disagree */
    assert_false(judge(0.334, 0, 10976, NAN, NAN, NULL, 0));
    /* one repetition has no cv to judge */
    mb_noise_in one = { .cv = 0.5, .max_cv = 0.1, .repetitions = 1, .median = 1 };
    assert_false(mb_noise_judge(&one, NULL, 0));
}

/* ---- a case's ceiling, schema 1 and 2 ---------------------------------------------- */

/* A CPU compute case of schema 1 (no "ceiling", no max_cv key): median
 * 154.3, best 160, burst 170, sustained 175.7, cv 1.2%, peak 2817. */
static const char *V1_GEMM =
    "{\"id\":\"gemm/openblas/dtype=fp32,k=2048,m=2048,n=2048\",\"component\":\"gemm\",\"backend\":\"openblas\","
    "\"params\":{\"dtype\":\"fp32\",\"m\":\"2048\",\"n\":\"2048\",\"k\":\"2048\"},\"status\":\"ok\",\"reason\":null,"
    "\"work_unit\":\"flop\",\"work_per_iteration\":17179869184,\"rate_unit\":\"GFLOP/s\",\"rate_scale\":1e9,"
    "\"latency_first\":false,\"repetitions\":5,\"rate\":{\"median\":154.3,\"best\":160,\"mean\":155,\"cv\":0.012},"
    "\"burst\":{\"rate\":170,\"rate_best\":171},\"sustained\":{\"rate\":175.7,\"rate_best\":175.7},"
    "\"ceiling_phase\":\"sustained\",\"peak\":{\"value\":2817,\"source\":\"computed\"},\"efficiency\":0.0548,"
    "\"verification\":{\"status\":\"passed\",\"detail\":\"\"},\"notes\":[]}";

static cJSON *parse(const char *text)
{
    cJSON *c = cJSON_Parse(text);
    assert_non_null(c);
    return c;
}

static void test_case_ceiling(void **s)
{
    (void)s;
    mb_ceiling ce;
    cJSON *c = parse(V1_GEMM);
    /* schema 1: derived, the sustained phase; its efficiency is ceiling / peak, not the file's median / peak */
    assert_true(mb_case_ceiling(c, &ce));
    CLOSE(ce.value, 175.7);
    assert_string_equal(ce.source, "sustained");
    assert_string_equal(ce.unit, "GFLOP/s");
    CLOSE(ce.efficiency, 175.7 / 2817);
    assert_true(ce.noisy); /* 13.9% apart, allowance max(3.6%, 5%) */
    assert_string_equal(mb_case_state(c), "noisy");
    /* schema 2: the file's "ceiling" is the number, whatever else it holds */
    cJSON_AddItemToObject(c, "ceiling", parse("{\"value\":150,\"unit\":\"GFLOP/s\",\"source\":\"median\"}"));
    assert_true(mb_case_ceiling(c, &ce));
    CLOSE(ce.value, 150);
    assert_string_equal(ce.source, "median");
    cJSON_ReplaceItemInObject(c, "ceiling", cJSON_CreateNull());
    assert_false(mb_case_ceiling(c, &ce));
    assert_true(isnan(ce.value));
    cJSON_Delete(c);

    /* no phases: the median; cv 33.4% without a max_cv key (files from before it) is judged by the default */
    c = parse("{\"status\":\"ok\",\"rate_unit\":\"GFLOP/s\",\"repetitions\":5,\"rate\":{\"median\":10976,\"cv\":0.334},"
              "\"verification\":{\"status\":\"passed\"}}");
    assert_true(mb_case_ceiling(c, &ce));
    CLOSE(ce.value, 10976);
    assert_string_equal(ce.source, "median");
    assert_true(ce.noisy);
    assert_non_null(strstr(ce.why, "cv 33.4% > max_cv 10.0%"));
    /* max_cv null: the job file turned the check off */
    cJSON_AddNullToObject(c, "max_cv");
    mb_case_ceiling(c, &ce);
    assert_false(ce.noisy);
    assert_string_equal(mb_case_state(c), "ok");
    /* ran, but its output was not checked */
    cJSON_ReplaceItemInObject(c, "verification", parse("{\"status\":\"not-run\"}"));
    assert_string_equal(mb_case_state(c), "not verified");
    cJSON_Delete(c);

    /* a failed case keeps its numbers for inspection, never as a ceiling */
    c = parse("{\"status\":\"failed\",\"rate\":{\"median\":5,\"cv\":0.9},\"repetitions\":3,"
              "\"verification\":{\"status\":\"failed\"}}");
    assert_false(mb_case_ceiling(c, &ce));
    assert_false(ce.noisy);
    assert_string_equal(mb_case_state(c), "failed");
    cJSON_Delete(c);
    c = parse("{\"status\":\"skipped\",\"reason\":\"no GPU\"}");
    assert_false(mb_case_ceiling(c, &ce));
    assert_string_equal(mb_case_state(c), "skipped");
    cJSON_Delete(c);
}

/* ---- the same number in every view ----------------------------------------------- */

static cJSON *doc_with(const char *case_json, int version)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":%d,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"box\"},\"cpu\":{\"model\":\"cpu\"}},\"cases\":[%s]}",
             version, case_json);
    return parse(text);
}

/* The HTML page of a results document (the caller frees it). */
static char *html_page(const cJSON *doc)
{
    char *page = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&page, &len);
    assert_non_null(o);
    mb_err e = { 0 };
    assert_int_equal(mb_html_results(o, doc, &e), MB_OK);
    fclose(o);
    return page;
}

static char *written(const cJSON *doc, const char *format)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mb_err e = { 0 };
    assert_int_equal(mb_write_results(f, doc, format, &e), MB_OK);
    fclose(f);
    return buf;
}

static void test_one_number_everywhere(void **s)
{
    (void)s;
    cJSON *doc = doc_with(V1_GEMM, 1);
    /* text: the headline is the sustained 175.7, named as such, and the case is noisy */
    char *t = written(doc, "table");
    assert_non_null(strstr(t, "175.7 GFLOP/s  sustained"));
    assert_non_null(strstr(t, "\nnoisy "));
    assert_non_null(strstr(t, "median 154.3 GFLOP/s; best 160 GFLOP/s; cv 1.2%; burst 170 GFLOP/s; sustained "
                              "175.7 GFLOP/s; peak 2817 GFLOP/s"));
    free(t);
    /* Markdown: ceiling and source columns, the secondary figures with their unit */
    t = written(doc, "md");
    assert_non_null(strstr(t, "| noisy | gemm/openblas dtype=fp32 m=2k n=2k k=2k | 175.7 GFLOP/s | sustained | "
                              "154.3 GFLOP/s | 160 GFLOP/s | 1.2% | 170 GFLOP/s | 175.7 GFLOP/s | 2817 GFLOP/s | 6% |"));
    free(t);
    /* CSV: the ceiling columns, and efficiency = ceiling / peak */
    t = written(doc, "csv");
    assert_non_null(strstr(t, ",ceiling,ceiling_unit,ceiling_source,state\n"));
    assert_non_null(strstr(t, ",175.7,GFLOP/s,sustained,noisy\n"));
    char eff[64];
    snprintf(eff, sizeof eff, ",%.9g,", 175.7 / 2817);
    assert_non_null(strstr(t, eff));
    free(t);
    /* JSON: the file in the current version, with its ceiling and noisy flag */
    t = written(doc, "json");
    cJSON *j = parse(t);
    free(t);
    assert_int_equal(cJSON_GetObjectItem(j, "schema_version")->valueint, MB_RESULTS_SCHEMA_VERSION);
    const cJSON *jc = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 0);
    CLOSE(cJSON_GetObjectItem(cJSON_GetObjectItem(jc, "ceiling"), "value")->valuedouble, 175.7);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(jc, "noisy")));
    CLOSE(cJSON_GetObjectItem(jc, "efficiency")->valuedouble, 175.7 / 2817);
    cJSON_Delete(j);

    /* HTML: the table's ceiling cell and state */
    char *page = html_page(doc);
    assert_non_null(strstr(page, "data-ceiling=\"175.69999999999999\""));
    assert_non_null(strstr(page, "<td>noisy</td>"));
    assert_null(strstr(page, "ceiling (median)"));
    free(page);

    /* --baseline: a baseline ceiling of 200 fails this run's 175.7, whatever the medians say */
    cJSON *base = doc_with(V1_GEMM, 1);
    cJSON *bc = cJSON_GetArrayItem(cJSON_GetObjectItem(base, "cases"), 0);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(bc, "sustained"), "rate", cJSON_CreateNumber(200));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(bc, "rate"), "median", cJSON_CreateNumber(100));
    cJSON *out = NULL;
    mb_err e = { 0 };
    assert_int_equal(mb_baseline_check(doc, base, 0.05, &out, &e), MB_EFAIL);
    const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "failed"), 0);
    CLOSE(cJSON_GetObjectItem(f0, "rate")->valuedouble, 175.7);
    CLOSE(cJSON_GetObjectItem(f0, "baseline")->valuedouble, 200);
    cJSON_Delete(out);
    /* a schema 2 baseline against a schema 1 run: both carry the one ceiling */
    cJSON *v2 = mb_results_current(base);
    mb_err e2 = { 0 };
    assert_int_equal(mb_baseline_check(doc, v2, 0.05, &out, &e2), MB_EFAIL);
    CLOSE(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(out, "failed"), 0), "baseline")->valuedouble,
          200);
    cJSON_Delete(out);
    cJSON_Delete(v2);
    cJSON_Delete(base);

    /* the analysis (gap, compare): the same rate, source and noise */
    mb_ceilings m;
    mb_err e3 = { 0 };
    assert_int_equal(mb_ceilings_from_json(cJSON_Duplicate(doc, 1), "mem.json", &m, &e3), MB_OK);
    CLOSE(m.cases[0].rate, 175.7);
    assert_string_equal(m.cases[0].phase, "sustained");
    CLOSE(m.cases[0].rate_median, 154.3);
    assert_true(m.cases[0].noisy);
    assert_non_null(strstr(m.cases[0].noise, "differ by 13.9%"));
    /* gap --ceiling burst still picks the burst phase */
    assert_int_equal(mb_ceilings_use_phase(&m, "burst", &e3), MB_OK);
    CLOSE(m.cases[0].rate, 170);
    mb_ceilings_free(&m);
    cJSON_Delete(doc);

    /* schema 2: the file's ceiling object is what the analysis takes */
    doc = doc_with(V1_GEMM, 2);
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0);
    cJSON_AddItemToObject(c0, "ceiling", parse("{\"value\":150,\"unit\":\"GFLOP/s\",\"source\":\"median\"}"));
    assert_int_equal(mb_ceilings_from_json(cJSON_Duplicate(doc, 1), "mem.json", &m, &e3), MB_OK);
    CLOSE(m.cases[0].rate, 150);
    assert_string_equal(m.cases[0].phase, "median");
    mb_ceilings_free(&m);
    /* a malformed ceiling is named by its path */
    cJSON_ReplaceItemInObject(c0, "ceiling", parse("{\"value\":-1}"));
    assert_int_equal(mb_ceilings_from_json(cJSON_Duplicate(doc, 1), "mem.json", &m, &e3), MB_EUSAGE);
    assert_non_null(strstr(e3.msg, "cases[0].ceiling.value"));
    cJSON_Delete(doc);
}

/* ---- the text table fits 120 columns, wraps and never cuts ---------------------------- */

static void test_table_fits(void **s)
{
    (void)s;
    cJSON *doc = doc_with(
        "{\"id\":\"conv/cudnn/x\",\"component\":\"conv\",\"backend\":\"cudnn\",\"params\":{\"n\":\"256\",\"c\":\"64\","
        "\"h\":\"56\",\"w\":\"56\",\"k\":\"64\",\"direction\":\"bwd_filter\",\"layout\":\"nhwc\",\"dtype\":\"bf16\","
        "\"algorithm\":\"CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1_WITH_A_VERY_LONG_NAME\"},\"status\":\"ok\","
        "\"work_unit\":\"flop\",\"rate_unit\":\"TFLOP/s\",\"rate_scale\":1e12,\"repetitions\":5,"
        "\"rate\":{\"median\":391.6,\"best\":393.5,\"cv\":0.016},\"max_cv\":0.1,"
        "\"peak\":{\"value\":989.4},\"verification\":{\"status\":\"passed\"},\"notes\":[\"GPU clocks were held down "
        "at the end of the case because the board reached its configured power limit for longer than a second: "
        "sw_power_cap\", \"second note\"]},"
        "{\"id\":\"gemm/cublaslt/y\",\"component\":\"gemm\",\"backend\":\"cublaslt\",\"params\":{\"dtype\":\"fp8\"},"
        "\"status\":\"skipped\",\"reason\":\"the CUDA driver on this machine is older than the runtime mlbench was "
        "built with, so every CUDA call fails with cudaErrorInsufficientDriver\",\"verification\":{\"status\":"
        "\"not-run\"}},"
        "{\"id\":\"launch/cuda/op=launch\",\"component\":\"launch\",\"backend\":\"cuda\",\"params\":{\"op\":\"launch\"},"
        "\"status\":\"ok\",\"work_unit\":\"op\",\"rate_unit\":\"Mop/s\",\"rate_scale\":1e6,\"latency_first\":true,"
        "\"repetitions\":5,\"rate\":{\"median\":0.25866528,\"best\":0.2668,\"cv\":0.04},\"max_cv\":0.1,"
        "\"verification\":{\"status\":\"passed\"},\"notes\":[]},"
        "{\"id\":\"membw/cuda/op=write\",\"component\":\"membw\",\"backend\":\"cuda\",\"params\":{\"op\":\"write\"},"
        "\"status\":\"ok\",\"work_unit\":\"byte\",\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"repetitions\":5,"
        "\"rate\":{\"median\":25276063.744,\"best\":25276063.744,\"cv\":0},\"max_cv\":0.1,"
        "\"peak\":{\"value\":63.0153846153846},\"verification\":{\"status\":\"passed\"},\"notes\":[]}",
        2);
    char *t = written(doc, "table");
    assert_true(widest_line(t) <= MB_TEXT_COLS);
    /* wrapped, not cut: the part that carries the information is there */
    assert_non_null(strstr(t, "sw_power_cap"));
    assert_non_null(strstr(t, "cudaErrorInsufficientDriver"));
    assert_non_null(strstr(t, "VERY_LONG_NAME"));
    assert_null(strstr(t, "..."));
    /* one time format (3 significant digits), units on every figure, no raw numbers */
    assert_non_null(strstr(t, "3.87 µs/op"));
    assert_non_null(strstr(t, "best 3.75 µs/op"));
    assert_non_null(strstr(t, "391.6 TFLOP/s  median"));
    assert_non_null(strstr(t, "peak 989.4 TFLOP/s"));
    assert_non_null(strstr(t, "peak 63.02 GB/s"));
    assert_non_null(strstr(t, "25276064 GB/s"));
    assert_null(strstr(t, "63.0153846153846"));
    assert_null(strstr(t, "e+"));
    assert_non_null(strstr(t, "\nskipped "));
    /* the rest of a case's notes are counted, not dropped silently */
    assert_non_null(strstr(t, "(1 more note: --format md or json)"));
    free(t);
    cJSON_Delete(doc);
}

/* Skipped cases of one backend with one reason, in a row, share one line of
 * the terminal table with their count; another reason, another backend or a
 * case between them starts a new line; Markdown keeps a row per case. */
static void test_skips_grouped(void **s)
{
    (void)s;
#define SKIP(comp, be, n, why)                                                                                         \
    "{\"id\":\"" comp "/" be "/n=" n "\",\"component\":\"" comp "\",\"backend\":\"" be "\",\"params\":{\"n\":\"" n    \
    "\"},\"status\":\"skipped\",\"reason\":\"" why "\",\"verification\":{\"status\":\"not-run\"}}"
    cJSON *doc = doc_with(SKIP("copy", "cuda", "1", "no GPU") "," SKIP("copy", "cuda", "2", "no GPU") ","
                          SKIP("copy", "cuda", "3", "no GPU") "," SKIP("copy", "cuda", "4", "other") ","
                          SKIP("membw", "cuda", "5", "other") ","
                          "{\"id\":\"launch/cuda/n=6\",\"component\":\"launch\",\"backend\":\"cuda\","
                          "\"params\":{\"n\":\"6\"},\"status\":\"ok\",\"work_unit\":\"op\",\"rate_unit\":\"Mop/s\","
                          "\"rate_scale\":1e6,\"latency_first\":true,\"repetitions\":5,\"rate\":{\"median\":0.25,"
                          "\"best\":0.26,\"cv\":0.01},\"max_cv\":0.1,\"verification\":{\"status\":\"passed\"},"
                          "\"notes\":[]}," SKIP("membw", "cuda", "7", "other"),
                          2);
#undef SKIP
    char *t = written(doc, "table");
    assert_non_null(strstr(t, "copy/cuda: 3 cases (--format md lists each)"));
    assert_null(strstr(t, "n=2")); /* inside the group */
    assert_non_null(strstr(t, "copy/cuda n=4"));  /* another reason: a line of its own */
    assert_non_null(strstr(t, "membw/cuda n=5")); /* another backend */
    assert_non_null(strstr(t, "membw/cuda n=7")); /* a case between: not grouped with n=5 */
    const char *reason = strstr(t, "no GPU");
    assert_non_null(reason);
    assert_null(strstr(reason + 1, "no GPU")); /* the group's reason once */
    free(t);
    char *md = written(doc, "md");
    for (int n = 1; n <= 7; n++) {
        char id[16];
        snprintf(id, sizeof id, "n=%d", n);
        assert_non_null(strstr(md, id));
    }
    free(md);
    cJSON_Delete(doc);
}

/* ---- int8 counts operations: TOP/s in new files and in old ones read again ------------- */

/* An H100 int8 GEMM as the first H100 run wrote it: rate_unit TFLOP/s. */
static const char *OLD_INT8 =
    "{\"id\":\"gemm/cublaslt/dtype=int8\",\"component\":\"gemm\",\"backend\":\"cublaslt\","
    "\"params\":{\"dtype\":\"int8\"},\"params_set\":[\"dtype\"],\"status\":\"ok\",\"reason\":null,"
    "\"work_unit\":\"flop\",\"work_per_iteration\":1099511627776,\"rate_unit\":\"TFLOP/s\",\"rate_scale\":1e12,"
    "\"latency_first\":false,\"repetitions\":5,\"rate\":{\"median\":1268,\"best\":1281,\"mean\":1268,\"cv\":0.026},"
    "\"ceiling\":{\"value\":1268,\"unit\":\"TFLOP/s\",\"source\":\"median\"},"
    "\"peak\":{\"value\":1979,\"source\":\"datasheet\"},\"verification\":{\"status\":\"passed\",\"detail\":\"\"},"
    "\"notes\":[\"int8: the rate counts integer multiply-adds as 2 operations; read TFLOP/s as TOPS\"]}";

static void test_int8_unit(void **s)
{
    (void)s;
    char b[32];
    assert_string_equal(mb_rate_unit_for_dtype("TFLOP/s", "int8", b, sizeof b), "TOP/s");
    assert_string_equal(mb_rate_unit_for_dtype("GFLOP/s", "uint8", b, sizeof b), "GOP/s");
    assert_string_equal(mb_rate_unit_for_dtype("TFLOP/s", "bf16", b, sizeof b), "TFLOP/s");
    assert_string_equal(mb_rate_unit_for_dtype("GB/s", "int8", b, sizeof b), "GB/s");
    assert_string_equal(mb_rate_unit_for_dtype("TFLOP/s", NULL, b, sizeof b), "TFLOP/s");

    /* an old file read again: rate_unit and ceiling.unit in TOP/s, the fp32 case untouched */
    char path[] = "/tmp/mb_int8_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "{\"schema\":\"mlbench-results\",\"schema_version\":2,\"started_utc\":\"2026-01-01T00:00:00Z\","
            "\"context\":{},\"cases\":[%s,%s]}",
            OLD_INT8, V1_GEMM);
    fclose(f);
    cJSON *doc = NULL;
    mb_err e = { 0 };
    assert_int_equal(mb_results_load(path, &doc, &e), MB_OK);
    unlink(path);
    const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0);
    const cJSON *c1 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 1);
    assert_string_equal(cJSON_GetObjectItem(c0, "rate_unit")->valuestring, "TOP/s");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "ceiling"), "unit")->valuestring, "TOP/s");
    assert_string_equal(cJSON_GetObjectItem(c1, "rate_unit")->valuestring, "GFLOP/s");
    /* and the old note no longer asks the reader to convert */
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(c0, "notes"), 0)->valuestring,
                        "int8: the rate counts integer multiply-adds as 2 operations, in TOP/s");
    /* every view says TOP/s: the table, and the analysis (gap, compare) reads it without a unit clash */
    char *t = written(doc, "table");
    assert_non_null(strstr(t, "1268 TOP/s"));
    assert_non_null(strstr(t, "peak 1979 TOP/s"));
    assert_null(strstr(t, "TOP/s TFLOP/s"));
    assert_null(strstr(t, "1268 TFLOP/s"));
    free(t);
    mb_ceilings m;
    assert_int_equal(mb_ceilings_from_json(cJSON_Duplicate(doc, 1), "mem.json", &m, &e), MB_OK);
    assert_string_equal(m.cases[0].rate_unit, "TOP/s");
    mb_ceilings_free(&m);
    cJSON_Delete(doc);
    /* a document not read by mb_results_load (an in-memory one) still shows OP/s */
    doc = doc_with(OLD_INT8, 2);
    t = written(doc, "table");
    assert_non_null(strstr(t, "1268 TOP/s"));
    free(t);
    cJSON_Delete(doc);
}

/* One home for where a case ran: the case's own "device" (written from its
 * backend's description) wins over configs/gap/matching.ini's [devices]
 * lists, which only a file from before the key needs. */
static void test_device_from_the_case(void **s)
{
    (void)s;
    const char *fmt = "{\"id\":\"gemm/%s/dtype=fp32\",\"component\":\"gemm\",\"backend\":\"%s\",%s"
                      "\"status\":\"skipped\",\"reason\":\"x\",\"params\":{}}";
    char cases[1024], a[256], b[256], c[256];
    snprintf(a, sizeof a, fmt, "newgpu", "newgpu", "\"device\":\"gpu\",");   /* a backend the ini does not list */
    snprintf(b, sizeof b, fmt, "cublaslt", "cublaslt", "");                     /* an old file: the ini's list */
    snprintf(c, sizeof c, fmt, "openblas", "openblas", "\"device\":\"cpu\",");
    snprintf(cases, sizeof cases, "%s,%s,%s", a, b, c);
    cJSON *doc = doc_with(cases, 2);
    mb_ceilings m;
    mb_err e = { 0 };
    assert_int_equal(mb_ceilings_from_json(doc, "dev.json", &m, &e), MB_OK);
    assert_string_equal(m.cases[0].device, "gpu");
    assert_string_equal(m.cases[1].device, "gpu");
    assert_string_equal(m.cases[2].device, "cpu");
    mb_ceilings_free(&m);
}

/* ---- one time format: 3 significant digits, s/ms/us/ns ------------------------------------ */

static void test_seconds_format(void **s)
{
    (void)s;
    char b[32];
    mb_fmt_seconds(b, sizeof b, 1.2345);
    assert_string_equal(b, "1.23 s");
    mb_fmt_seconds(b, sizeof b, 0.008650);
    assert_string_equal(b, "8.65 ms");
    mb_fmt_seconds(b, sizeof b, 7.02e-05);
    assert_string_equal(b, "70.2 µs");
    mb_fmt_seconds(b, sizeof b, 3.51e-07);
    assert_string_equal(b, "351 ns");
    mb_fmt_seconds(b, sizeof b, 4e-10);
    assert_string_equal(b, "0.4 ns");
    /* the unit after rounding: never "1e+03 ms" */
    mb_fmt_seconds(b, sizeof b, 0.99996);
    assert_string_equal(b, "1 s");
    mb_fmt_seconds(b, sizeof b, 0.0009996);
    assert_string_equal(b, "1 ms");
    /* long times without an exponent */
    mb_fmt_seconds(b, sizeof b, 1234.4);
    assert_string_equal(b, "1234 s");
    mb_fmt_seconds(b, sizeof b, 0);
    assert_string_equal(b, "0 s");
    mb_fmt_seconds(b, sizeof b, NAN);
    assert_string_equal(b, "-");
}

/* ---- the HTML hover says the table's figure ---------------------------------------------- */

static void test_html_hover_figures(void **s)
{
    (void)s;
    /* the H100's noisy CPU conv: 10976 GFLOP/s in the table, so in the bar's hover (not 1.098e+04) */
    cJSON *doc = doc_with("{\"id\":\"conv/onednn/dtype=bf16\",\"component\":\"conv\",\"backend\":\"onednn\","
                          "\"params\":{\"dtype\":\"bf16\"},\"params_set\":[\"dtype\"],\"status\":\"ok\","
                          "\"work_unit\":\"flop\",\"work_per_iteration\":1e9,\"rate_unit\":\"GFLOP/s\","
                          "\"rate_scale\":1e9,\"latency_first\":false,\"repetitions\":5,"
                          "\"rate\":{\"median\":10976.3,\"best\":16253,\"cv\":0.334},"
                          "\"ceiling\":{\"value\":10976.3,\"unit\":\"GFLOP/s\",\"source\":\"median\"},"
                          "\"peak\":{\"value\":45077,\"source\":\"computed\"},"
                          "\"verification\":{\"status\":\"passed\",\"detail\":\"\"},\"notes\":[]}",
                          2);
    char *t = written(doc, "table");
    assert_non_null(strstr(t, "10976 GFLOP/s"));
    free(t);
    char *page = html_page(doc);
    /* and noisy there too, as in the table */
    assert_non_null(strstr(page, "dtype=bf16: 10976 GFLOP/s, cv 33.4%, noisy: not a reliable ceiling</title>"));
    assert_non_null(strstr(page, "<title>peak 45077 GFLOP/s: computed</title>"));
    assert_null(strstr(page, "e+04"));
    free(page);
    cJSON_Delete(doc);
}

/* ---- --baseline names the case as the table does, with both ceilings and their unit -------- */

static void test_baseline_printout(void **s)
{
    (void)s;
    cJSON *doc = doc_with(V1_GEMM, 1);
    cJSON *base = doc_with(V1_GEMM, 1);
    cJSON *bc = cJSON_GetArrayItem(cJSON_GetObjectItem(base, "cases"), 0);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(bc, "sustained"), "rate", cJSON_CreateNumber(200));
    cJSON_AddItemToArray(cJSON_GetObjectItem(base, "cases"),
                         parse("{\"id\":\"hostmem/stream/kernel=triad,threads=0\",\"component\":\"hostmem\","
                               "\"backend\":\"stream\",\"params\":{\"kernel\":\"triad\",\"threads\":\"0\"},"
                               "\"params_set\":[\"kernel\"],\"status\":\"ok\",\"rate_unit\":\"GB/s\","
                               "\"rate\":{\"median\":7.3}}"));
    cJSON *out = NULL;
    mb_err e = { 0 };
    assert_int_equal(mb_baseline_check(doc, base, 0.05, &out, &e), MB_EFAIL);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    mb_baseline_print(f, out, 0.05);
    fclose(f);
    /* 175.7 against 200: 12.2% below */
    assert_non_null(strstr(text, "  FAILED gemm/openblas dtype=fp32 m=2k n=2k k=2k: ceiling 175.7 GFLOP/s, 12.2% below "
                                 "the baseline's 200 GFLOP/s\n    (tolerance 5.0%)\n"));
    assert_non_null(strstr(text, "  not compared hostmem/stream kernel=triad: in the baseline, not in this run\n"));
    assert_null(strstr(text, "threads=0"));
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        assert_true(n <= 120);
        l += n + (nl != NULL);
    }
    free(text);
    cJSON_Delete(out);
    cJSON_Delete(base);
    cJSON_Delete(doc);
}

/* A new results file: an int8 GEMM of a backend whose rate unit is TFLOP/s is written in TOP/s, its
 * ceiling too; an fp16 case of the same backend stays in TFLOP/s. */
static const mb_param_spec GEMM_SPEC[] = { { "dtype", MB_P_ENUM, "fp16", "fp16|int8", 0, -1, "dtype" },
                                           MB_PARAM_END };
static const mb_component_ops GEMM_OPS = { .component = "gemm", .backend = "fake", .work_unit = "flop",
                                           .rate_unit = "TFLOP/s", .rate_scale = 1e12, .params = GEMM_SPEC };

static void test_int8_unit_at_source(void **s)
{
    (void)s;
    const char *dtypes[] = { "int8", "fp16" }, *units[] = { "TOP/s", "TFLOP/s" };
    for (int i = 0; i < 2; i++) {
        const char *names[] = { "dtype" }, *values[] = { dtypes[i] };
        mb_case c = { .id = "gemm/fake/x", .section = "s", .ops = &GEMM_OPS, .max_cv = 0.1 };
        c.params = mb_params_build(GEMM_SPEC, names, values, 1, NULL);
        assert_non_null(c.params);
        mb_record r;
        mb_record_init(&r, &c);
        r.status = MB_CASE_OK;
        r.verify = MB_VERIFY_PASSED;
        r.work_per_iter = 1e12;
        assert_int_equal(mb_record_add_repetition(&r, 10, 0.01), MB_OK);
        cJSON *j = mb_record_to_json(&r);
        assert_string_equal(cJSON_GetObjectItem(j, "rate_unit")->valuestring, units[i]);
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ceiling"), "unit")->valuestring, units[i]);
        cJSON_Delete(j);
        mb_record_free(&r);
        mb_params_free(c.params);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noise_rule),
        cmocka_unit_test(test_case_ceiling),
        cmocka_unit_test(test_one_number_everywhere),
        cmocka_unit_test(test_table_fits),
        cmocka_unit_test(test_skips_grouped),
        cmocka_unit_test(test_int8_unit),
        cmocka_unit_test(test_seconds_format),
        cmocka_unit_test(test_html_hover_figures),
        cmocka_unit_test(test_baseline_printout),
        cmocka_unit_test(test_int8_unit_at_source),
        cmocka_unit_test(test_device_from_the_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
