/* test_compare.c: `mlbench compare` on two hand-made results files
 * (tests/data/gap_here.json, gap_there.json); expected figures by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analysis.h"
#include "analysis_writers.h"
#include "compare.h"
#include "gap_test_util.h"

typedef struct fx {
    mb_ceilings m[2];
    mb_ini keys;
    mb_compare c;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    mb_err err = { 0 };
    if (mb_ini_load_gap("compare.ini", &f->keys, &err) || mb_ceilings_load(data_path("gap_here.json"), &f->m[0], &err) ||
        mb_ceilings_load(data_path("gap_there.json"), &f->m[1], &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    mb_compare_free(&f->c);
    mb_ceilings_free(&f->m[0]);
    mb_ceilings_free(&f->m[1]);
    mb_ini_free(&f->keys);
    free(f);
    rm_scratch();
    return 0;
}

static const mb_compare_row *row(const mb_compare *c, const char *id)
{
    for (int r = 0; r < c->n_rows; r++)
        if (strcmp(c->rows[r].id, id) == 0)
            return &c->rows[r];
    fail_msg("no row %s", id);
    return NULL;
}

static const mb_compare_geo *geo(const mb_compare *c, const char *component)
{
    for (int g = 0; g < c->n_geo; g++)
        if (strcmp(c->geo[g].component, component) == 0)
            return &c->geo[g];
    fail_msg("no component %s", component);
    return NULL;
}

static void build(fx *f, const char *const *prices, int n_prices)
{
    mb_err err = { 0 };
    mb_compare_free(&f->c);
    int rc = mb_compare_build(f->m, 2, NULL, 0, prices, n_prices, &f->keys, &f->c, &err);
    if (rc)
        fail_msg("%s", err.msg);
}

#define GEMM8K "gemm/cublaslt/dtype=bf16,k=8192,m=8192,n=8192"
#define GEMM1K "gemm/cublaslt/dtype=bf16,k=1024,m=1024,n=1024"

static void test_ratios_and_geomean(void **state)
{
    fx *f = *state;
    build(f, NULL, 0);
    /* same GPU model on both: the host names tell them apart */
    assert_string_equal(f->c.label[0], "Test GPU @ here");
    assert_string_equal(f->c.label[1], "Test GPU @ there");
    CLOSE(row(&f->c, GEMM8K)->ratio[1], 1200.0 / 600);
    CLOSE(row(&f->c, GEMM1K)->ratio[1], 450.0 / 300);
    CLOSE(row(&f->c, "disk/io_uring/block_size=131072,mode=direct,pattern=random,qd=32")->ratio[1], 8000.0 / 2000);
    /* launch is latency-first: the ratio is still of rates (250k/s -> 500k/s) */
    CLOSE(row(&f->c, "launch/cuda/count=1000,op=launch")->ratio[1], 500000.0 / 250000);
    /* fp8 failed here: no ratio, the gemm geomean leaves it out, and it is
     * not a case "on every machine" (it did not run here) */
    const mb_compare_row *fp8 = row(&f->c, "gemm/cublaslt/dtype=fp8,k=8192,m=8192,n=8192");
    assert_false(fp8->everywhere);
    assert_true(fp8->rate[0] < 0);
    assert_true(fp8->ratio[1] < 0);
    const mb_compare_geo *g = geo(&f->c, "gemm");
    CLOSE(g->geomean[1], sqrt(2.0 * 1.5));
    assert_int_equal(g->n[1], 2);
    CLOSE(g->geomean[0], 1.0);
    CLOSE(geo(&f->c, "disk")->geomean[1], 4.0);
    assert_true(geo(&f->c, "hostmem")->geomean[1] < 0); /* skipped here, absent there */
}

static void test_one_side_only(void **state)
{
    fx *f = *state;
    build(f, NULL, 0);
    const mb_compare_row *conv = row(&f->c, "conv/cudnn/c=64,dtype=bf16,h=56,k=64,n=32,r=3,s=3,w=56");
    assert_false(conv->everywhere);
    assert_int_equal(conv->idx[0], -1);
    assert_true(conv->idx[1] >= 0);
    const mb_compare_row *seq = row(&f->c, "disk/io_uring/block_size=1048576,mode=direct,pattern=sequential,qd=32");
    assert_false(seq->everywhere);
    assert_int_equal(seq->idx[1], -1);
    /* 17 cases here + conv there = 18 distinct identities */
    assert_int_equal(f->c.n_rows, 18);
}

static void test_price(void **state)
{
    fx *f = *state;
    const char *prices[] = { "here=2", "gap_there.json=4" };
    build(f, prices, 2);
    CLOSE(f->c.price[0], 2);
    CLOSE(f->c.price[1], 4);
    /* per dollar: rate x 3600 s / USD per hour */
    CLOSE(row(&f->c, GEMM8K)->per_usd[0], 600.0 * 3600 / 2);
    CLOSE(row(&f->c, GEMM8K)->per_usd[1], 1200.0 * 3600 / 4);
    /* gemm per-dollar ratios 1.0 and (450/4)/(300/2) = 0.75 */
    CLOSE(geo(&f->c, "gemm")->geomean_usd[1], sqrt(1.0 * 0.75));
    CLOSE(geo(&f->c, "disk")->geomean_usd[1], (8000.0 / 4) / (2000.0 / 2));

    mb_err err = { 0 };
    mb_compare bad;
    const char *unknown[] = { "nobody=3" };
    assert_int_equal(mb_compare_build(f->m, 2, NULL, 0, unknown, 1, &f->keys, &bad, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "nobody"));
    mb_err_clear(&err);
    const char *malformed[] = { "here=cheap" };
    assert_int_equal(mb_compare_build(f->m, 2, NULL, 0, malformed, 1, &f->keys, &bad, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "cheap"));
}

static void test_context_differences(void **state)
{
    fx *f = *state;
    build(f, NULL, 0);
    bool cpu = false, kernel = false, driver = false;
    for (int k = 0; k < f->c.n_ctx; k++) {
        const char *key = f->c.ctx[k].key;
        cpu = cpu || (strcmp(key, "cpu.model") == 0 && strcmp(f->c.ctx[k].value[1], "Test CPU 9900") == 0);
        kernel = kernel || strcmp(key, "os.kernel") == 0;
        driver = driver || strcmp(key, "gpus[0].driver") == 0;
        /* equal entries are not listed */
        assert_string_not_equal(key, "memory.total_bytes");
        assert_string_not_equal(key, "gpus[0].name");
    }
    assert_true(cpu && kernel && driver);
}

static void test_cmd(void **state)
{
    (void)state;
    char *out, *err;
    char *argv[] = { "compare", (char *)data_path("gap_here.json"), "--format", "json", (char *)data_path("gap_there.json"),
                     "--price", "there=4", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 7, argv, &out, &err), 0);
    cJSON *doc = cJSON_Parse(out);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "format")->valuestring, "mlbench-compare");
    cJSON *g = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "geomean"), "gemm");
    CLOSE(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "ratio"), 1)->valuedouble, sqrt(3.0));
    cJSON_Delete(doc);
    free(out);
    free(err);

    char *table_argv[] = { "compare", (char *)data_path("gap_here.json"), (char *)data_path("gap_there.json"), NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 3, table_argv, &out, &err), 0);
    assert_non_null(strstr(out, "1.73x (2 of 4)")); /* gemm: 2 of the 4 cases that ran somewhere */
    assert_non_null(strstr(out, "A absent, B 500 TFLOP/s")); /* the conv case only B ran */
    assert_non_null(strstr(out, "gpus[0].driver"));
    free(out);
    free(err);

    char *one[] = { "compare", (char *)data_path("gap_here.json"), NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 2, one, &out, &err), 2);
    assert_non_null(strstr(err, "two or more"));
    free(out);
    free(err);

    const char *bad = scratch_file("v9.json", "{\"schema\":\"mlbench-results\",\"schema_version\":9,\"cases\":[]}");
    char *badv[] = { "compare", (char *)data_path("gap_here.json"), (char *)bad, NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 3, badv, &out, &err), 2);
    assert_non_null(strstr(err, "v9.json"));
    free(out);
    free(err);
}

/* A results file whose context is `context` (JSON text), no cases. */
static const char *machine_file(const char *name, const char *context)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":%s,\"cases\":[]}",
             context);
    return scratch_file(name, text);
}

static void load(const char *path, mb_ceilings *m)
{
    mb_err err = { 0 };
    if (mb_ceilings_load(path, m, &err))
        fail_msg("%s", err.msg);
}

static void test_machine_label_names_the_hardware(void **state)
{
    (void)state;
    mb_ceilings m[3];
    load(machine_file("h100.json", "{\"host\":{\"name\":\"vm\"},\"cpu\":{\"model\":\"Intel(R) Xeon(R) "
                                   "Processor\"},\"gpus\":[{\"name\":\"NVIDIA H100\"},{\"name\":\"NVIDIA H100\"}]}"),
         &m[0]);
    load(machine_file("cpu.json", "{\"host\":{\"name\":\"vm\"},\"cpu\":{\"model\":\"AMD EPYC(TM) 7B13\"},"
                                  "\"gpus\":[]}"),
         &m[1]);
    load(machine_file("bare.json", "{\"host\":{\"name\":\"box\"}}"), &m[2]);
    /* GPU count and model; CPU model without trademark marks; host when nothing else */
    assert_string_equal(mb_ceilings_label(&m[0]), "2x NVIDIA H100");
    assert_string_equal(mb_ceilings_label(&m[1]), "AMD EPYC 7B13");
    assert_string_equal(mb_ceilings_label(&m[2]), "box");
    char *l[3] = { 0 };
    mb_err err = { 0 };
    assert_int_equal(mb_machine_labels(m, 3, NULL, 0, l, &err), MB_OK);
    /* both hosts are "vm": the hardware alone tells them apart */
    assert_string_equal(l[0], "2x NVIDIA H100");
    assert_string_equal(l[1], "AMD EPYC 7B13");
    for (int i = 0; i < 3; i++) {
        free(l[i]);
        mb_ceilings_free(&m[i]);
    }
}

static void test_machine_label_ties(void **state)
{
    (void)state;
    const char *ctx_a = "{\"host\":{\"name\":\"vm\"},\"gpus\":[{\"name\":\"NVIDIA H100\"}]}";
    const char *ctx_b = "{\"host\":{\"name\":\"node7\"},\"gpus\":[{\"name\":\"NVIDIA H100\"}]}";
    mb_ceilings m[3];
    load(machine_file("monday.json", ctx_a), &m[0]);
    load(machine_file("tuesday.json", ctx_a), &m[1]);
    load(machine_file("other.json", ctx_b), &m[2]);
    char *l[3] = { 0 };
    mb_err err = { 0 };
    assert_int_equal(mb_machine_labels(m, 3, NULL, 0, l, &err), MB_OK);
    /* one model: the host; one host too: the file name */
    assert_string_equal(l[0], "NVIDIA H100 @ vm (monday.json)");
    assert_string_equal(l[1], "NVIDIA H100 @ vm (tuesday.json)");
    assert_string_equal(l[2], "NVIDIA H100 @ node7");
    for (int i = 0; i < 3; i++)
        free(l[i]);

    /* --label NAME=FILE wins, by file name or path */
    const char *over[] = { "before=monday.json", "after=tuesday.json" };
    assert_int_equal(mb_machine_labels(m, 3, over, 2, l, &err), MB_OK);
    assert_string_equal(l[0], "before");
    assert_string_equal(l[1], "after");
    assert_string_equal(l[2], "NVIDIA H100"); /* no longer tied */
    for (int i = 0; i < 3; i++)
        free(l[i]);

    const char *none[] = { "x=nothere.json" };
    assert_int_equal(mb_machine_labels(m, 3, none, 1, l, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "nothere.json"));
    for (int i = 0; i < 3; i++) {
        free(l[i]);
        l[i] = NULL;
    }
    mb_err_clear(&err);
    const char *same[] = { "x=monday.json", "x=tuesday.json" };
    assert_int_equal(mb_machine_labels(m, 3, same, 2, l, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "--label"));
    for (int i = 0; i < 3; i++) {
        free(l[i]);
        mb_ceilings_free(&m[i]);
    }
}

/* --price keys are the labels too, and the case column shows labels, not ids */
static void test_price_by_label_and_case_labels(void **state)
{
    fx *f = *state;
    const char *labels[] = { "mine=gap_here.json" };
    const char *prices[] = { "mine=2", "Test GPU=4" }; /* B no longer ties with A */
    mb_err err = { 0 };
    mb_compare_free(&f->c);
    assert_int_equal(mb_compare_build(f->m, 2, labels, 1, prices, 2, &f->keys, &f->c, &err), MB_OK);
    CLOSE(f->c.price[0], 2);
    CLOSE(f->c.price[1], 4);
    assert_string_equal(row(&f->c, GEMM8K)->label, "gemm/cublaslt dtype=bf16 m=8k n=8k k=8k");
    char *out, *errs;
    char *argv[] = { "compare", (char *)data_path("gap_here.json"), (char *)data_path("gap_there.json"), NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 3, argv, &out, &errs), 0);
    assert_null(strstr(out, GEMM8K));
    assert_non_null(strstr(out, "gemm/cublaslt dtype=bf16 m=8k n=8k k=8k"));
    free(out);
    free(errs);
}

/* ---- unlike machines: a GPU box and a CPU box ------------------------------------------ */

/* A results case: id component/backend/params, rate in TFLOP/s (or GB/s for byte work). */
static int case_json(char *buf, size_t len, const char *backend, const char *params, const char *dtype, double rate,
                     const char *status, const char *verification)
{
    return snprintf(buf, len,
                    "{\"id\":\"gemm/%s/%s\",\"section\":\"gemm\",\"component\":\"gemm\",\"backend\":\"%s\","
                    "\"params\":{\"dtype\":\"%s\"},\"status\":\"%s\",\"reason\":null,\"work_unit\":\"flop\","
                    "\"work_per_iteration\":1e9,\"rate_unit\":\"TFLOP/s\",\"rate_scale\":1e12,\"latency_first\":false,"
                    "\"repetitions\":5,\"iterations\":10,\"rate\":{\"median\":%.17g,\"best\":%.17g,\"mean\":%.17g,"
                    "\"cv\":0.01},\"verification\":{\"status\":\"%s\",\"detail\":\"test\"},\"metrics\":{},\"info\":{},"
                    "\"notes\":[]}",
                    backend, params, backend, dtype, status, rate, rate, rate, status[0] == 'o' ? verification : "not-run");
}

static const char *scratch_path(const char *name)
{
    static char buf[4][512];
    static int slot;
    char *p = buf[slot++ % 4];
    snprintf(p, 512, "%s/%s", scratch_dir(), name);
    return p;
}

static const char *results_file(const char *name, const char *host, const char *cases)
{
    static char text[8192];
    snprintf(text, sizeof text,
             "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
             "\"context\":{\"host\":{\"name\":\"%s\"},\"cpu\":{\"model\":\"%s CPU\"}},\"cases\":[%s]}",
             host, host, cases);
    return scratch_file(name, text);
}

/* A: the GPU box (cuBLASLt fp32 50 TFLOP/s, bf16 700; its host's OpenBLAS
 * fp32 0.1; fp8 failed). B: the CPU box (OpenBLAS fp32 0.2, fp64 0.1; a
 * cuBLASLt case skipped). Expected figures by hand. */
static void unlike_machines(mb_ceilings m[2])
{
    char a[4][1024], b[3][1024], all_a[4200], all_b[3200];
    case_json(a[0], sizeof a[0], "cublaslt", "dtype=fp32", "fp32", 50, "ok", "passed");
    case_json(a[1], sizeof a[1], "cublaslt", "dtype=bf16", "bf16", 700, "ok", "passed");
    case_json(a[2], sizeof a[2], "openblas", "dtype=fp32", "fp32", 0.1, "ok", "passed");
    case_json(a[3], sizeof a[3], "cublaslt", "dtype=fp8", "fp8", 0, "failed", "not-run");
    case_json(b[0], sizeof b[0], "openblas", "dtype=fp32", "fp32", 0.2, "ok", "passed");
    case_json(b[1], sizeof b[1], "openblas", "dtype=fp64", "fp64", 0.1, "ok", "passed");
    case_json(b[2], sizeof b[2], "cublaslt", "dtype=fp32", "fp32", 0, "skipped", "not-run");
    snprintf(all_a, sizeof all_a, "%s,%s,%s,%s", a[0], a[1], a[2], a[3]);
    snprintf(all_b, sizeof all_b, "%s,%s,%s", b[0], b[1], b[2]);
    load(results_file("gpu.json", "gpubox", all_a), &m[0]);
    load(results_file("cpu.json", "cpubox", all_b), &m[1]);
}

static const mb_compare_best *best_kind(const mb_compare *c, const char *component, const char *kind)
{
    for (int b = 0; b < c->n_best; b++)
        if (!strcmp(c->best[b].component, component) && !strcmp(c->best[b].kind, kind))
            return &c->best[b];
    fail_msg("no kind %s %s", component, kind);
    return NULL;
}

static void test_unlike_machines_both_views(void **state)
{
    fx *f = *state;
    mb_ceilings m[2];
    unlike_machines(m);
    const char *prices[] = { "A=3", "B=0.2" }; /* by the letters the output shows */
    mb_compare c;
    mb_err err = { 0 };
    if (mb_compare_build(m, 2, NULL, 0, prices, 2, &f->keys, &c, &err))
        fail_msg("%s", err.msg);
    CLOSE(c.price[0], 3);
    CLOSE(c.price[1], 0.2);
    const mb_compare_geo *g = geo(&c, "gemm");
    /* like-for-like: only OpenBLAS fp32 ran on both, 0.2 / 0.1; of the 4
     * cases that ran somewhere (fp8 failed, the skipped one ran nowhere else) */
    CLOSE(g->geomean[1], 2.0);
    assert_int_equal(g->n[1], 1);
    assert_int_equal(g->n_total, 4);
    /* best per kind: fp32 is A's cuBLASLt 50 TFLOP/s against B's OpenBLAS 0.2 */
    const mb_compare_best *fp32 = best_kind(&c, "gemm", "dtype=fp32");
    CLOSE(fp32->rate_abs[0], 50e12);
    CLOSE(fp32->rate_abs[1], 0.2e12);
    CLOSE(fp32->ratio[1], 0.2 / 50);
    assert_string_equal(c.rows[fp32->row[0]].id, "gemm/cublaslt/dtype=fp32");
    assert_string_equal(c.rows[fp32->row[1]].id, "gemm/openblas/dtype=fp32");
    /* fp32 is the only kind both have, of fp32, bf16, fp64 (fp8 ran nowhere) */
    CLOSE(g->best_geomean[1], 0.2 / 50);
    assert_int_equal(g->best_n[1], 1);
    assert_int_equal(g->best_total, 3);
    assert_int_equal(best_kind(&c, "gemm", "dtype=bf16")->row[1], -1);
    /* work per dollar = rate x 3600 / USD per hour:
     * A 50e12 x 3600 / 3 = 6e16 FLOP/$, B 0.2e12 x 3600 / 0.2 = 3.6e15 FLOP/$ */
    CLOSE(fp32->per_usd_abs[0], 6e16);
    CLOSE(fp32->per_usd_abs[1], 3.6e15);
    CLOSE(g->best_geomean_usd[1], 3.6e15 / 6e16);
    /* like-for-like per dollar: 2.0 x 3 / 0.2 */
    CLOSE(g->geomean_usd[1], 30.0);
    /* on every machine: only the case that ran and verified on both */
    int everywhere = 0;
    for (int r = 0; r < c.n_rows; r++)
        everywhere += c.rows[r].everywhere;
    assert_int_equal(everywhere, 1);
    assert_true(row(&c, "gemm/openblas/dtype=fp32")->everywhere);
    assert_false(row(&c, "gemm/cublaslt/dtype=fp32")->everywhere); /* skipped on B */
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
}

static void test_price_names_listed(void **state)
{
    fx *f = *state;
    mb_compare c;
    mb_err err = { 0 };
    const char *wrong[] = { "C=1" };
    assert_int_equal(mb_compare_build(f->m, 2, NULL, 0, wrong, 1, &f->keys, &c, &err), MB_EUSAGE);
    /* the error lists what the output calls the machines */
    assert_non_null(strstr(err.msg, "A, 'Test GPU @ here', gap_here.json"));
    assert_non_null(strstr(err.msg, "B, 'Test GPU @ there', gap_there.json"));
    mb_err_clear(&err);
    const char *label[] = { "Test GPU @ there=4", "a=1" }; /* a label, and a lower-case letter is no letter */
    assert_int_equal(mb_compare_build(f->m, 2, NULL, 0, label, 1, &f->keys, &c, &err), MB_OK);
    CLOSE(c.price[1], 4);
    assert_true(c.price[0] == 0);
    mb_compare_free(&c);
    assert_int_equal(mb_compare_build(f->m, 2, NULL, 0, label + 1, 1, &f->keys, &c, &err), MB_EUSAGE);
}

/* Known answers of the figures compare prints. */
static void test_human_figures(void **state)
{
    (void)state;
    char b[64];
    /* an H100's 989 TFLOP/s at 2.5 USD/hour: 989e12 x 3600 / 2.5 = 1.42416e18 FLOP per dollar */
    CLOSE(mb_compare_per_usd(989e12, 2.5), 1.42416e18);
    assert_true(mb_compare_per_usd(989e12, 0) < 0);
    mb_compare_fmt_per_usd(b, sizeof b, mb_compare_per_usd(989e12, 2.5), "flop");
    assert_string_equal(b, "1.42 EFLOP/$");
    mb_compare_fmt_per_usd(b, sizeof b, 3.932e6 * 1e9, "flop"); /* the 3.932e+06 GFLOP/$ of before */
    assert_string_equal(b, "3.93 PFLOP/$");
    mb_compare_fmt_per_usd(b, sizeof b, 2.5e12, "byte");
    assert_string_equal(b, "2.5 TB/$");
    mb_compare_fmt_rate(b, sizeof b, 175.7e9, "flop", false);
    assert_string_equal(b, "176 GFLOP/s");
    mb_compare_fmt_rate(b, sizeof b, 999.9e9, "byte", false); /* rounds up into the next prefix */
    assert_string_equal(b, "1 TB/s");
    mb_compare_fmt_rate(b, sizeof b, 250000, "op", true);
    assert_non_null(strstr(b, "4"));
    assert_non_null(strstr(b, "s/op"));
    mb_fmt_ratio(b, sizeof b, 0.91);
    assert_string_equal(b, "0.91x");
    mb_fmt_ratio(b, sizeof b, 0.00053);
    assert_string_equal(b, "0.00053x");
    mb_fmt_ratio(b, sizeof b, 12.34);
    assert_string_equal(b, "12.3x");
    mb_fmt_ratio(b, sizeof b, 1234.6);
    assert_string_equal(b, "1235x");
    mb_fmt_ratio(b, sizeof b, -1);
    assert_string_equal(b, "-");
}

/* The text of unlike machines: both views with coverage, no exponents, the
 * per-dollar unit, nothing skipped under "cases on every machine", 120 columns. */
static void test_unlike_machines_text(void **state)
{
    (void)state;
    mb_ceilings m[2];
    unlike_machines(m);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
    char *out, *errs;
    char *argv[] = { "compare", (char *)scratch_path("gpu.json"), (char *)scratch_path("cpu.json"), "--price", "A=3",
                     "--price", "cpu.json=0.2", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 7, argv, &out, &errs), 0);
    assert_non_null(strstr(out, "0.0040x (1 of 3)")); /* best per kind */
    assert_non_null(strstr(out, "2.00x (1 of 4)"));   /* like-for-like */
    assert_non_null(strstr(out, "60 PFLOP/$"));       /* 6e16 FLOP per dollar */
    assert_non_null(strstr(out, "3.6 PFLOP/$"));
    assert_null(strstr(out, "e+"));
    assert_null(strstr(out, "h/$"));
    const char *every = strstr(out, "cases on every machine");
    const char *partial = strstr(out, "cases not on every machine");
    assert_non_null(every);
    assert_non_null(partial);
    size_t n = (size_t)(partial - every);
    char *section = strndup(every, n);
    assert_non_null(strstr(section, "gemm/openblas"));
    assert_null(strstr(section, "skipped"));
    assert_null(strstr(section, "cublaslt"));
    free(section);
    assert_non_null(strstr(partial, "A 50 TFLOP/s, B skipped"));
    for (const char *line = out; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > 120)
            fail_msg("line over 120 columns: %.*s", (int)len, line);
        line += len + (end != NULL);
    }
    free(out);
    free(errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratios_and_geomean), cmocka_unit_test(test_one_side_only),
        cmocka_unit_test(test_price),              cmocka_unit_test(test_context_differences),
        cmocka_unit_test(test_cmd),                cmocka_unit_test(test_machine_label_names_the_hardware),
        cmocka_unit_test(test_machine_label_ties), cmocka_unit_test(test_price_by_label_and_case_labels),
        cmocka_unit_test(test_unlike_machines_both_views), cmocka_unit_test(test_price_names_listed),
        cmocka_unit_test(test_human_figures),         cmocka_unit_test(test_unlike_machines_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
