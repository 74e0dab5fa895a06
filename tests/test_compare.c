/* test_compare.c: `mlbench compare` on two hand-made results files
 * (tests/data/gap_here.json, gap_there.json); expected figures by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sys/stat.h>

#include "analysis.h"
#include "compare_writers.h"
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

/* The means of a component's cases on one device kind: "cpu" (the host) or "gpu". */
static const mb_compare_geo *geo(const mb_compare *c, const char *component, const char *device)
{
    for (int g = 0; g < c->n_geo; g++)
        if (strcmp(c->geo[g].component, component) == 0 && strcmp(c->geo[g].device, device) == 0)
            return &c->geo[g];
    fail_msg("no component %s on %s", component, device);
    return NULL;
}

/* The JSON's case of that id: cases[] {id, status[], rate[], ...}. */
static const cJSON *json_case(const cJSON *doc, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
    {
        const cJSON *cid = cJSON_GetObjectItem(c, "id");
        if (cJSON_IsString(cid) && !strcmp(cid->valuestring, id))
            return c;
    }
    fail_msg("no case %s in the JSON", id);
    return NULL;
}

/* The JSON's mean of a component on a device kind: geomean[] {component, device, ...}. */
static const cJSON *json_geo(const cJSON *doc, const char *component, const char *device)
{
    const cJSON *g, *list = cJSON_GetObjectItem(doc, "geomean");
    if (!cJSON_IsArray(list))
        fail_msg("geomean is not a list of {component, device, ...}");
    cJSON_ArrayForEach(g, list)
    {
        const cJSON *comp = cJSON_GetObjectItem(g, "component"), *dev = cJSON_GetObjectItem(g, "device");
        if (cJSON_IsString(comp) && cJSON_IsString(dev) && !strcmp(comp->valuestring, component) &&
            !strcmp(dev->valuestring, device))
            return g;
    }
    fail_msg("no geomean of %s on %s in the JSON", component, device);
    return NULL;
}

/* The terminal's geomean rows of `what` ("gemm (GPU)"): its best-per-kind row
 * holds `best`, the like-for-like row under it `like`; after `from` (a
 * section's title) when given. */
static void geo_rows_after(const char *out, const char *from, const char *what, const char *best, const char *like)
{
    char head[128];
    snprintf(head, sizeof head, "\n  %s ", what);
    const char *at = from ? strstr(out, from) : out;
    assert_non_null(at);
    const char *l = strstr(at, head);
    if (l == NULL)
        fail_msg("no row '%s'", what);
    const char *end = strchr(l + 1, '\n');
    const char *end2 = end ? strchr(end + 1, '\n') : NULL;
    assert_non_null(end2);
    char *row = strndup(l + 1, (size_t)(end - l - 1)), *next = strndup(end + 1, (size_t)(end2 - end - 1));
    if (!strstr(row, "best per kind") || !strstr(row, best) || !strstr(next, "like-for-like") || !strstr(next, like))
        fail_msg("'%s' / '%s': expected %s / %s", row, next, best, like);
    free(row);
    free(next);
}

static void geo_rows(const char *out, const char *what, const char *best, const char *like)
{
    geo_rows_after(out, "geometric means of the ratios to A", what, best, like);
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
    const mb_compare_geo *g = geo(&f->c, "gemm", "gpu");
    CLOSE(g->geomean[1], sqrt(2.0 * 1.5));
    assert_int_equal(g->n[1], 2);
    CLOSE(g->geomean[0], 1.0);
    /* the host's OpenBLAS case ran here only: its own mean, none */
    assert_true(geo(&f->c, "gemm", "cpu")->geomean[1] < 0);
    assert_int_equal(geo(&f->c, "gemm", "cpu")->n_total, 1);
    CLOSE(geo(&f->c, "disk", "cpu")->geomean[1], 4.0);
    assert_true(geo(&f->c, "hostmem", "cpu")->geomean[1] < 0); /* skipped here, absent there */
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
    CLOSE(geo(&f->c, "gemm", "gpu")->geomean_usd[1], sqrt(1.0 * 0.75));
    CLOSE(geo(&f->c, "disk", "cpu")->geomean_usd[1], (8000.0 / 4) / (2000.0 / 2));

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
    const cJSON *g = json_geo(doc, "gemm", "gpu");
    CLOSE(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "ratio"), 1)->valuedouble, sqrt(3.0));
    cJSON_Delete(doc);
    free(out);
    free(err);

    char *table_argv[] = { "compare", (char *)data_path("gap_here.json"), (char *)data_path("gap_there.json"), NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 3, table_argv, &out, &err), 0);
    /* the GPU's gemm: 2 of the 3 GPU cases that ran somewhere (bf16 2x, 1.5x), of its 2 kinds bf16 (2x);
     * the host's OpenBLAS case, which ran here only, apart */
    geo_rows(out, "gemm (GPU)", "2.00x (1 of 2)", "1.73x (2 of 3)");
    geo_rows(out, "gemm (host CPU)", "- (0 of 1)", "- (0 of 1)");
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

static const mb_compare_best *best_kind(const mb_compare *c, const char *component, const char *device,
                                        const char *kind)
{
    for (int b = 0; b < c->n_best; b++)
        if (!strcmp(c->best[b].component, component) && !strcmp(c->best[b].device, device) &&
            !strcmp(c->best[b].kind, kind))
            return &c->best[b];
    fail_msg("no kind %s %s on %s", component, kind, device);
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
    /* the host CPU: only OpenBLAS fp32 ran on both, 0.2 / 0.1; of the 2 host
     * cases that ran somewhere (fp32, B's fp64) */
    const mb_compare_geo *host = geo(&c, "gemm", "cpu");
    CLOSE(host->geomean[1], 2.0);
    assert_int_equal(host->n[1], 1);
    assert_int_equal(host->n_total, 2);
    /* the GPU: A's cuBLASLt fp32 and bf16 ran (fp8 failed); B has no GPU case that ran */
    const mb_compare_geo *gpu = geo(&c, "gemm", "gpu");
    assert_true(gpu->geomean[1] < 0);
    assert_int_equal(gpu->n_total, 2);
    /* best per kind, per device kind: the host's fp32 is A's OpenBLAS 0.1 against B's 0.2 ... */
    const mb_compare_best *fp32 = best_kind(&c, "gemm", "cpu", "dtype=fp32");
    CLOSE(fp32->rate_abs[0], 0.1e12);
    CLOSE(fp32->rate_abs[1], 0.2e12);
    CLOSE(fp32->ratio[1], 2.0);
    assert_string_equal(c.rows[fp32->row[0]].id, "gemm/openblas/dtype=fp32");
    assert_string_equal(c.rows[fp32->row[1]].id, "gemm/openblas/dtype=fp32");
    /* ... never against A's GPU: the GPU's fp32 is A's cuBLASLt 50 TFLOP/s, B none */
    const mb_compare_best *gpu32 = best_kind(&c, "gemm", "gpu", "dtype=fp32");
    CLOSE(gpu32->rate_abs[0], 50e12);
    assert_int_equal(gpu32->row[1], -1);
    assert_true(gpu32->ratio[1] < 0);
    /* host kinds fp32 and fp64, both only fp32; GPU kinds fp32 and bf16 (fp8 ran nowhere), none on B */
    CLOSE(host->best_geomean[1], 2.0);
    assert_int_equal(host->best_n[1], 1);
    assert_int_equal(host->best_total, 2);
    assert_true(gpu->best_geomean[1] < 0);
    assert_int_equal(gpu->best_total, 2);
    /* work per dollar = rate x 3600 / USD per hour of the whole machine:
     * host fp32: A 0.1e12 x 3600 / 3 = 1.2e14 FLOP/$, B 0.2e12 x 3600 / 0.2 = 3.6e15 FLOP/$;
     * the GPU's fp32 on A: 50e12 x 3600 / 3 = 6e16 FLOP/$ */
    CLOSE(fp32->per_usd_abs[0], 1.2e14);
    CLOSE(fp32->per_usd_abs[1], 3.6e15);
    CLOSE(gpu32->per_usd_abs[0], 6e16);
    CLOSE(host->best_geomean_usd[1], 30.0);
    CLOSE(host->geomean_usd[1], 30.0); /* like-for-like: 2.0 x 3 / 0.2 */
    assert_true(gpu->best_geomean_usd[1] < 0);
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
    /* the host CPUs apart from A's GPU: best per kind of 2 host kinds, like-for-like of 2 host cases */
    geo_rows(out, "gemm (host CPU)", "2.00x (1 of 2)", "2.00x (1 of 2)");
    geo_rows(out, "gemm (GPU)", "- (0 of 2)", "- (0 of 2)");
    assert_non_null(strstr(out, "60 PFLOP/$"));       /* 6e16 FLOP per dollar, A's GPU */
    assert_non_null(strstr(out, "3.6 PFLOP/$"));      /* B's host CPU */
    geo_rows_after(out, "geometric means of the per-dollar", "gemm (host CPU)", "30.0x (1 of 2)", "30.0x (1 of 2)");
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

/* ---- one kind of work across backends; int8 in OP/s ---------------------------------- */

/* A case of any component, rate in TFLOP/s (as the first H100 run wrote int8 too). */
static int any_case(char *buf, size_t len, const char *component, const char *backend, const char *params_json,
                    const char *id_params, double rate)
{
    return snprintf(buf, len,
                    "{\"id\":\"%s/%s/%s\",\"section\":\"%s\",\"component\":\"%s\",\"backend\":\"%s\","
                    "\"params\":%s,\"status\":\"ok\",\"reason\":null,\"work_unit\":\"flop\","
                    "\"work_per_iteration\":1e9,\"rate_unit\":\"TFLOP/s\",\"rate_scale\":1e12,\"latency_first\":false,"
                    "\"repetitions\":5,\"iterations\":10,\"rate\":{\"median\":%.17g,\"best\":%.17g,\"mean\":%.17g,"
                    "\"cv\":0.01},\"verification\":{\"status\":\"passed\",\"detail\":\"test\"},\"metrics\":{},"
                    "\"info\":{},\"notes\":[]}",
                    component, backend, id_params, component, component, backend, params_json, rate, rate, rate);
}

/* A d2d copy case in GB/s: size in bytes. */
static int copy_case(char *buf, size_t len, const char *size, double gbps)
{
    return snprintf(buf, len,
                    "{\"id\":\"copy/cuda/direction=d2d,size=%s\",\"section\":\"copy\",\"component\":\"copy\","
                    "\"backend\":\"cuda\",\"params\":{\"direction\":\"d2d\",\"size\":\"%s\"},\"status\":\"ok\","
                    "\"reason\":null,\"work_unit\":\"byte\",\"work_per_iteration\":1e9,\"rate_unit\":\"GB/s\","
                    "\"rate_scale\":1e9,\"latency_first\":false,\"repetitions\":5,\"iterations\":10,"
                    "\"rate\":{\"median\":%.17g,\"best\":%.17g,\"mean\":%.17g,\"cv\":0.01},"
                    "\"verification\":{\"status\":\"passed\",\"detail\":\"test\"},\"metrics\":{},\"info\":{},"
                    "\"notes\":[]}",
                    size, size, gbps, gbps, gbps);
}

/* The H200 reference's d2d copies: 16 MiB (source and destination in its 60 MiB L2) 4844 GB/s, 1 GiB 4264, DRAM
 * 4814. Its best d2d copy is the 1 GiB one: the cached copy claimed more than the memory's bandwidth. A machine
 * whose results give no L2 keeps the fastest, and a machine with only cached copies keeps its fastest of them. */
static void test_cached_copy_not_a_best(void **state)
{
    fx *f = *state;
    char small[1024], big[1024], cases[2100], text[4096];
    copy_case(small, sizeof small, "16777216", 4844);
    copy_case(big, sizeof big, "1073741824", 4264);
    snprintf(cases, sizeof cases, "%s,%s", small, big);
    const char *head = "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"started_utc\":\"2026-01-01T00:00:00Z\","
                       "\"context\":{\"host\":{\"name\":\"%s\"},\"gpus\":[{\"name\":\"G\"%s}]},\"cases\":[%s]}";
    mb_ceilings m[3];
    snprintf(text, sizeof text, head, "withl2", ",\"benchmark_device\":true,\"l2_bytes\":62914560", cases);
    load(scratch_file("l2.json", text), &m[0]);
    snprintf(text, sizeof text, head, "nol2", "", cases);
    load(scratch_file("nol2.json", text), &m[1]);
    snprintf(text, sizeof text, head, "onlysmall", ",\"l2_bytes\":62914560", small);
    load(scratch_file("small.json", text), &m[2]);
    mb_compare c;
    mb_err err = { 0 };
    if (mb_compare_build(m, 3, NULL, 0, NULL, 0, &f->keys, &c, &err))
        fail_msg("%s", err.msg);
    const mb_compare_best *d2d = best_kind(&c, "copy", "gpu", "direction=d2d");
    CLOSE(d2d->rate_abs[0], 4264e9);
    CLOSE(d2d->rate_abs[1], 4844e9);
    CLOSE(d2d->rate_abs[2], 4844e9);
    CLOSE(d2d->ratio[1], 4844.0 / 4264);
    mb_compare_free(&c);
    for (int i = 0; i < 3; i++)
        mb_ceilings_free(&m[i]);
}

/* oneDNN's conv has no direction: it is the forward pass (compare.ini [best.defaults]), named as cuDNN's
 * direction=fwd, a host CPU kind all the same. int8 GEMMs pair with int8 only, in OP/s, also from files that
 * said TFLOP/s. */
static void test_kinds_across_backends(void **state)
{
    fx *f = *state;
    char a[3][1024], b[4][1024], all_a[3200], all_b[4200];
    any_case(a[0], sizeof a[0], "conv", "onednn", "{\"dtype\":\"bf16\",\"n\":\"4\"}", "dtype=bf16", 0.011);
    any_case(a[1], sizeof a[1], "gemm", "cublas", "{\"dtype\":\"int8\"}", "dtype=int8", 1000);
    any_case(a[2], sizeof a[2], "gemm", "cublas", "{\"dtype\":\"bf16\"}", "dtype=bf16", 600);
    any_case(b[0], sizeof b[0], "conv", "cudnn", "{\"dtype\":\"bf16\",\"direction\":\"fwd\"}",
             "direction=fwd,dtype=bf16", 383);
    any_case(b[1], sizeof b[1], "conv", "cudnn", "{\"dtype\":\"bf16\",\"direction\":\"bwd_data\"}",
             "direction=bwd_data,dtype=bf16", 353);
    any_case(b[2], sizeof b[2], "gemm", "cublaslt", "{\"dtype\":\"int8\"}", "dtype=int8", 1268);
    any_case(b[3], sizeof b[3], "gemm", "cublaslt", "{\"dtype\":\"bf16\"}", "dtype=bf16", 700);
    snprintf(all_a, sizeof all_a, "%s,%s,%s", a[0], a[1], a[2]);
    snprintf(all_b, sizeof all_b, "%s,%s,%s,%s", b[0], b[1], b[2], b[3]);
    mb_ceilings m[2];
    load(results_file("kinds_a.json", "boxa", all_a), &m[0]);
    load(results_file("kinds_b.json", "boxb", all_b), &m[1]);
    mb_compare c;
    mb_err err = { 0 };
    if (mb_compare_build(m, 2, NULL, 0, NULL, 0, &f->keys, &c, &err))
        fail_msg("%s", err.msg);
    /* oneDNN's conv is the forward pass, named as cuDNN's forward kind, but on the host CPU: it never pairs
     * with a GPU's */
    const mb_compare_best *fwd = best_kind(&c, "conv", "cpu", "dtype=bf16 direction=fwd");
    CLOSE(fwd->rate_abs[0], 0.011e12);
    assert_int_equal(fwd->row[1], -1);
    const mb_compare_best *gpu_fwd = best_kind(&c, "conv", "gpu", "dtype=bf16 direction=fwd");
    CLOSE(gpu_fwd->rate_abs[1], 383e12);
    assert_int_equal(gpu_fwd->row[0], -1);
    assert_int_equal(best_kind(&c, "conv", "gpu", "dtype=bf16 direction=bwd_data")->row[0], -1);
    for (int k = 0; k < c.n_best; k++) /* no conv kind of its own for oneDNN */
        assert_false(!strcmp(c.best[k].component, "conv") && !strcmp(c.best[k].kind, "dtype=bf16"));
    /* int8: one kind, in OP, its ratio against int8 only */
    const mb_compare_best *i8 = best_kind(&c, "gemm", "gpu", "dtype=int8");
    assert_string_equal(i8->work_unit, "OP");
    CLOSE(i8->ratio[1], 1268.0 / 1000);
    assert_string_equal(best_kind(&c, "gemm", "gpu", "dtype=bf16")->work_unit, "flop");
    char cell[64];
    mb_compare_fmt_best(cell, sizeof cell, &c, i8, 1);
    assert_string_equal(cell, "1.27 POP/s cublaslt");
    mb_compare_fmt_cell(cell, sizeof cell, &c, row(&c, "gemm/cublaslt/dtype=int8"), 1);
    assert_string_equal(cell, "1.27 POP/s");
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
}

/* A noisy case is noisy in compare too: in its cell, its best-per-kind cell and the JSON, as `report` says. */
static void test_noisy_marked(void **state)
{
    fx *f = *state;
    char a[1024], b[1024];
    any_case(a, sizeof a, "gemm", "openblas", "{\"dtype\":\"fp32\"}", "dtype=fp32", 0.2);
    any_case(b, sizeof b, "gemm", "openblas", "{\"dtype\":\"fp32\"}", "dtype=fp32", 0.3);
    /* B's repetitions disagree: cv 33.4% against the default max_cv of 10% */
    char *cv = strstr(b, "\"cv\":0.01");
    assert_non_null(cv);
    memcpy(cv, "\"cv\":0.33", 9);
    mb_ceilings m[2];
    load(results_file("noisy_a.json", "boxa", a), &m[0]);
    load(results_file("noisy_b.json", "boxb", b), &m[1]);
    assert_false(m[0].cases[0].noisy);
    assert_true(m[1].cases[0].noisy);
    mb_compare c;
    mb_err err = { 0 };
    if (mb_compare_build(m, 2, NULL, 0, NULL, 0, &f->keys, &c, &err))
        fail_msg("%s", err.msg);
    char cell[96];
    mb_compare_fmt_cell(cell, sizeof cell, &c, &c.rows[0], 0);
    assert_string_equal(cell, "200 GFLOP/s");
    mb_compare_fmt_cell(cell, sizeof cell, &c, &c.rows[0], 1);
    assert_string_equal(cell, "300 GFLOP/s noisy");
    mb_compare_fmt_best(cell, sizeof cell, &c, best_kind(&c, "gemm", "cpu", "dtype=fp32"), 1);
    assert_string_equal(cell, "300 GFLOP/s openblas noisy");
    cJSON *j = mb_compare_to_json(&c);
    const cJSON *row0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 0);
    assert_false(cJSON_IsTrue(cJSON_GetArrayItem(cJSON_GetObjectItem(row0, "noisy"), 0)));
    assert_true(cJSON_IsTrue(cJSON_GetArrayItem(cJSON_GetObjectItem(row0, "noisy"), 1)));
    const cJSON *best0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "best"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetArrayItem(cJSON_GetObjectItem(best0, "noisy"), 1)));
    cJSON_Delete(j);
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
}

/* One wording per state: a case that ran but was not verified is "not verified" in compare's JSON too,
 * as in report's table, CSV and HTML. */
static void test_state_words(void **state)
{
    fx *f = *state;
    char a[1024], b[1024];
    any_case(a, sizeof a, "launch", "cuda", "{\"op\":\"stream_sync\"}", "op=stream_sync", 1);
    any_case(b, sizeof b, "launch", "cuda", "{\"op\":\"stream_sync\"}", "op=stream_sync", 1);
    const char *v = strstr(b, "\"passed\"");
    assert_non_null(v);
    char nv[1024];
    snprintf(nv, sizeof nv, "%.*s\"not-run\"%s", (int)(v - b), b, v + 8); /* ran, verification not run */
    snprintf(b, sizeof b, "%s", nv);
    mb_ceilings m[2];
    load(results_file("words_a.json", "boxa", a), &m[0]);
    load(results_file("words_b.json", "boxb", b), &m[1]);
    mb_compare c;
    mb_err err = { 0 };
    if (mb_compare_build(m, 2, NULL, 0, NULL, 0, &f->keys, &c, &err))
        fail_msg("%s", err.msg);
    cJSON *j = mb_compare_to_json(&c);
    const cJSON *st = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 0), "status");
    assert_string_equal(cJSON_GetArrayItem(st, 0)->valuestring, "ok");
    assert_string_equal(cJSON_GetArrayItem(st, 1)->valuestring, "not verified");
    char cell[96];
    mb_compare_fmt_cell(cell, sizeof cell, &c, &c.rows[0], 1);
    assert_string_equal(cell, "not verified");
    cJSON_Delete(j);
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
}

/* ---- device kinds apart; no datasheet for what cannot run ------------------------------- */

/* The whole of a file (the --html page), or fails. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Two GPU boxes (hosts gpua, gpub), each with host CPU GEMMs (OpenBLAS fp32,
 * fp64) and GPU GEMMs (cuBLASLt fp32, bf16): B's host CPU is 2x A's, B's GPU
 * 0.8x A's. Mixed, like-for-like read (2 x 2 x 0.8 x 0.8)^(1/4) = 1.26x and
 * best per kind put A's host fp64 (no GPU fp64 case) against B's:
 * (0.8 x 2 x 0.8)^(1/3) = 1.09x, neither what either device does. */
static void two_gpu_boxes(mb_ceilings m[2])
{
    char a[4][1024], b[4][1024], all_a[4200], all_b[4200];
    case_json(a[0], sizeof a[0], "openblas", "dtype=fp32", "fp32", 0.1, "ok", "passed");
    case_json(a[1], sizeof a[1], "openblas", "dtype=fp64", "fp64", 0.05, "ok", "passed");
    case_json(a[2], sizeof a[2], "cublaslt", "dtype=fp32", "fp32", 50, "ok", "passed");
    case_json(a[3], sizeof a[3], "cublaslt", "dtype=bf16", "bf16", 700, "ok", "passed");
    case_json(b[0], sizeof b[0], "openblas", "dtype=fp32", "fp32", 0.2, "ok", "passed");
    case_json(b[1], sizeof b[1], "openblas", "dtype=fp64", "fp64", 0.1, "ok", "passed");
    case_json(b[2], sizeof b[2], "cublaslt", "dtype=fp32", "fp32", 40, "ok", "passed");
    case_json(b[3], sizeof b[3], "cublaslt", "dtype=bf16", "bf16", 560, "ok", "passed");
    snprintf(all_a, sizeof all_a, "%s,%s,%s,%s", a[0], a[1], a[2], a[3]);
    snprintf(all_b, sizeof all_b, "%s,%s,%s,%s", b[0], b[1], b[2], b[3]);
    load(results_file("gpua.json", "gpua", all_a), &m[0]);
    load(results_file("gpub.json", "gpub", all_b), &m[1]);
}

#define HOST_NOTE                                                                                                  \
    "Host CPU rows divide the host CPU's work by the whole machine's price; A and B are GPU machines, whose prices " \
    "pay for their GPUs too: their host CPU work per $ charges the host CPU for the GPUs."

static void test_device_kinds_apart(void **state)
{
    fx *f = *state;
    mb_ceilings m[2];
    two_gpu_boxes(m);
    const char *prices[] = { "A=2", "B=1" };
    mb_compare c;
    mb_err err = { 0 };
    if (mb_compare_build(m, 2, NULL, 0, prices, 2, &f->keys, &c, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(row(&c, "gemm/openblas/dtype=fp32")->device, "cpu");
    assert_string_equal(row(&c, "gemm/cublaslt/dtype=fp32")->device, "gpu");
    const mb_compare_geo *host = geo(&c, "gemm", "cpu"), *gpu = geo(&c, "gemm", "gpu");
    CLOSE(host->geomean[1], 2.0);
    CLOSE(host->best_geomean[1], 2.0);
    assert_int_equal(host->n[1], 2);
    assert_int_equal(host->best_n[1], 2);
    CLOSE(gpu->geomean[1], 0.8);
    CLOSE(gpu->best_geomean[1], 0.8);
    assert_int_equal(gpu->n[1], 2);
    assert_int_equal(gpu->n_total, 2);
    /* fp64's best on A is its host's OpenBLAS, a host CPU kind: no GPU fp64 kind at all */
    CLOSE(best_kind(&c, "gemm", "cpu", "dtype=fp64")->ratio[1], 2.0);
    for (int k = 0; k < c.n_best; k++)
        assert_false(!strcmp(c.best[k].device, "gpu") && !strcmp(c.best[k].kind, "dtype=fp64"));
    /* per dollar: A at 2 USD/hour, B at 1: host 2.0 x 2 = 4, GPU 0.8 x 2 = 1.6 */
    CLOSE(host->best_geomean_usd[1], 4.0);
    CLOSE(gpu->best_geomean_usd[1], 1.6);
    assert_true(mb_compare_has_gpu(&c, 0) && mb_compare_has_gpu(&c, 1));
    char note[512];
    mb_compare_usd_note(note, sizeof note, &c, "cpu");
    assert_string_equal(note, HOST_NOTE);
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
}

/* Every view names the device kind of a mean and shows its one figure: text, Markdown, JSON, the page. */
static void test_device_kinds_every_view(void **state)
{
    (void)state;
    mb_ceilings m[2];
    two_gpu_boxes(m);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
    const char *html = scratch_path("devices.html");
    char *out, *errs;
    char *argv[] = { "compare", (char *)scratch_path("gpua.json"), (char *)scratch_path("gpub.json"), "--price", "A=2",
                     "--price", "B=1", "--html", (char *)html, "--format", "table", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 11, argv, &out, &errs), 0);
    geo_rows(out, "gemm (host CPU)", "2.00x (2 of 2)", "2.00x (2 of 2)");
    geo_rows(out, "gemm (GPU)", "0.80x (2 of 2)", "0.80x (2 of 2)");
    geo_rows_after(out, "geometric means of the per-dollar", "gemm (host CPU)", "4.00x (2 of 2)", "4.00x (2 of 2)");
    geo_rows_after(out, "geometric means of the per-dollar", "gemm (GPU)", "1.60x (2 of 2)", "1.60x (2 of 2)");
    assert_non_null(strstr(out, "A and B are GPU machines")); /* the note, wrapped at 120 columns */
    assert_null(strstr(out, "1.26x"));
    assert_null(strstr(out, "1.09x"));
    free(out);
    free(errs);

    argv[10] = "md";
    assert_int_equal(run_captured(mb_cmd_compare, 11, argv, &out, &errs), 0);
    assert_non_null(strstr(out, "| gemm (host CPU) | best per kind | 2.00x (2 of 2) |"));
    assert_non_null(strstr(out, "| gemm (host CPU) | like-for-like | 2.00x (2 of 2) |"));
    assert_non_null(strstr(out, "| gemm (GPU) | best per kind | 0.80x (2 of 2) |"));
    assert_non_null(strstr(out, "| gemm (GPU) | like-for-like | 0.80x (2 of 2) |"));
    assert_non_null(strstr(out, "| gemm (host CPU) | best per kind | 4.00x (2 of 2) |"));
    assert_non_null(strstr(out, "| gemm (GPU) | best per kind | 1.60x (2 of 2) |"));
    assert_non_null(strstr(out, "- " HOST_NOTE "\n"));
    free(out);
    free(errs);

    argv[10] = "json";
    assert_int_equal(run_captured(mb_cmd_compare, 11, argv, &out, &errs), 0);
    cJSON *doc = cJSON_Parse(out);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetObjectItem(doc, "version")->valueint, 2);
    const cJSON *host = json_geo(doc, "gemm", "cpu"), *gpu = json_geo(doc, "gemm", "gpu");
    CLOSE(cJSON_GetArrayItem(cJSON_GetObjectItem(host, "ratio"), 1)->valuedouble, 2.0);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(host, "cases"), 1)->valueint, 2);
    CLOSE(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(host, "best_per_kind"), "per_usd_ratio"), 1)
              ->valuedouble,
          4.0);
    CLOSE(cJSON_GetArrayItem(cJSON_GetObjectItem(gpu, "ratio"), 1)->valuedouble, 0.8);
    CLOSE(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(gpu, "best_per_kind"), "ratio"), 1)->valuedouble,
          0.8);
    const cJSON *notes = cJSON_GetObjectItem(doc, "per_usd_notes");
    assert_string_equal(cJSON_GetObjectItem(notes, "cpu")->valuestring, HOST_NOTE);
    assert_non_null(strstr(cJSON_GetObjectItem(notes, "gpu")->valuestring, "whole machine's price"));
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(doc, "best"))
    {
        const char *dev = cJSON_GetObjectItem(k, "device")->valuestring;
        const char *id = cJSON_GetArrayItem(cJSON_GetObjectItem(k, "case"), 0)->valuestring;
        assert_string_equal(dev, strstr(id, "openblas") ? "cpu" : "gpu");
    }
    cJSON_Delete(doc);
    free(out);
    free(errs);

    char *page = slurp(html);
    assert_non_null(strstr(page, ">gemm (host CPU): B 2 of 2<"));
    assert_non_null(strstr(page, ">gemm (GPU): B 2 of 2<"));
    assert_non_null(strstr(page, "gemm (host CPU) B/A: 2.00x over 2 of 2 cases"));
    assert_non_null(strstr(page, "gemm (GPU) B/A: 0.80x over 2 of 2 kinds"));
    assert_non_null(strstr(page, "gemm (host CPU) B/A: 4.00x over 2 of 2 kinds")); /* per dollar */
    assert_non_null(strstr(page, "<td>gemm (host CPU)</td><td>dtype=fp64</td>"));
    /* a chart per component and device kind: the host's GFLOP/s apart from the GPU's TFLOP/s */
    assert_non_null(strstr(page, ">gemm (host CPU): GFLOP/s, log scale<"));
    assert_non_null(strstr(page, ">gemm (GPU): TFLOP/s, log scale<"));
    assert_non_null(strstr(page, "<li>Host CPU rows divide the host CPU&#39;s work by the whole machine&#39;s price; "
                                 "A and B are GPU machines"));
    assert_null(strstr(page, "1.26x"));
    free(page);
}

/* The case as case_json writes it, with `reason` (skipped or failed). */
static void with_reason(char *buf, size_t len, const char *reason)
{
    char *at = strstr(buf, "\"reason\":null");
    assert_non_null(at);
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", at + strlen("\"reason\":null"));
    snprintf(at, len - (size_t)(at - buf), "\"reason\":\"%s\"%s", reason, rest);
}

#define NO_FP8 "fp8 is not available through cublasGemmEx: use backend cublaslt"

/* A reference (MLBENCH_REFERENCE_DIR) whose measured results hold cuBLAS fp8
 * as skipped because cuBLAS cannot do it, cuBLASLt fp8 as measured, and a
 * cuBLASLt tf32 case skipped for the run's setup (no driver); next to a CPU
 * box. The H100 SXM datasheet says fp8 1979 TFLOP/s, tf32 494.7. */
static void test_no_datasheet_for_unrunnable(void **state)
{
    (void)state;
    char r[3][1024], a[3][1024], all_r[3200], all_a[3200], dir[600], refs[512];
    case_json(r[0], sizeof r[0], "cublas", "dtype=fp8", "fp8", 0, "skipped", "not-run");
    with_reason(r[0], sizeof r[0], NO_FP8);
    case_json(r[1], sizeof r[1], "cublaslt", "dtype=fp8", "fp8", 1480, "ok", "passed");
    case_json(r[2], sizeof r[2], "cublaslt", "dtype=tf32", "tf32", 0, "skipped", "not-run");
    with_reason(r[2], sizeof r[2], "no usable CUDA device: cudaErrorInsufficientDriver");
    case_json(a[0], sizeof a[0], "cublas", "dtype=fp8", "fp8", 0, "skipped", "not-run");
    with_reason(a[0], sizeof a[0], "no usable CUDA device: cudaErrorInsufficientDriver");
    case_json(a[1], sizeof a[1], "cublaslt", "dtype=tf32", "tf32", 0, "skipped", "not-run");
    case_json(a[2], sizeof a[2], "openblas", "dtype=fp32", "fp32", 0.2, "ok", "passed");
    snprintf(all_r, sizeof all_r, "%s,%s,%s", r[0], r[1], r[2]);
    snprintf(all_a, sizeof all_a, "%s,%s,%s", a[0], a[1], a[2]);
    snprintf(refs, sizeof refs, "%s/refs", scratch_dir());
    snprintf(dir, sizeof dir, "%s/sxm", refs);
    mkdir(refs, 0755);
    mkdir(dir, 0755);
    results_file("refs/sxm/ref.json", "refhost", all_r);
    scratch_file("refs/sxm/reference.ini", "[reference]\nlabel = Test SXM\nfiles = ref.json\ndatasheet = h100-sxm\n"
                                           "[provenance]\nsource = test\n");
    setenv("MLBENCH_REFERENCE_DIR", refs, 1);
    const char *cpu = results_file("cpubox.json", "cpubox", all_a);

    char *out, *errs;
    char *argv[] = { "compare", (char *)cpu, "--reference", "sxm", "--format", "table", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 6, argv, &out, &errs), 0);
    /* cuBLAS cannot do fp8 there: no datasheet figure, its reason instead */
    assert_non_null(strstr(out, "B not runnable here (" NO_FP8 ")"));
    assert_null(strstr(out, "1.98 PFLOP/s"));
    /* tf32 was skipped for the run's setup, not for want of a path: the datasheet fills it */
    assert_non_null(strstr(out, "A skipped, B 495 TFLOP/s (datasheet)"));
    /* a CPU box's skip (no driver) is no "cannot run" */
    assert_null(strstr(out, "A not runnable"));
    free(out);
    free(errs);

    argv[5] = "json";
    assert_int_equal(run_captured(mb_cmd_compare, 6, argv, &out, &errs), 0);
    cJSON *doc = cJSON_Parse(out);
    assert_non_null(doc);
    const cJSON *fp8 = json_case(doc, "gemm/cublas/dtype=fp8");
    assert_string_equal(cJSON_GetObjectItem(fp8, "device")->valuestring, "gpu");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "status"), 1)->valuestring, "not runnable here");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "not_runnable"), 1)->valuestring, NO_FP8);
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "rate"), 1)));
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "rate_from"), 1)));
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "status"), 0)->valuestring, "skipped");
    cJSON_Delete(doc);
    free(out);
    free(errs);
    unsetenv("MLBENCH_REFERENCE_DIR");
}

/* Two references: one's results hold cuBLAS fp8 as skipped because cublasGemmEx has no fp8 (the library's path,
 * not the machine), the other's have no such case at all. No column gets the datasheet's fp8 peak for it: the
 * H200 reference's read "1.98 PFLOP/s (datasheet)" beside the H100's "not runnable here" (issue 34's audit). A skip
 * of the machine (no driver) leaves the other column's fill as it was. */
static void test_no_datasheet_where_no_path(void **state)
{
    (void)state;
    char r[2][1024], o[2][1024], all_r[2200], all_o[2200], refs[512], dir[600];
    case_json(r[0], sizeof r[0], "cublas", "dtype=fp8", "fp8", 0, "skipped", "not-run");
    with_reason(r[0], sizeof r[0], NO_FP8);
    case_json(r[1], sizeof r[1], "cublaslt", "dtype=tf32", "tf32", 0, "skipped", "not-run");
    with_reason(r[1], sizeof r[1], "no usable CUDA device: cudaErrorInsufficientDriver");
    case_json(o[0], sizeof o[0], "cublaslt", "dtype=fp8", "fp8", 1450, "ok", "passed");
    case_json(o[1], sizeof o[1], "openblas", "dtype=fp32", "fp32", 0.2, "ok", "passed");
    snprintf(all_r, sizeof all_r, "%s,%s", r[0], r[1]);
    snprintf(all_o, sizeof all_o, "%s,%s", o[0], o[1]);
    snprintf(refs, sizeof refs, "%s/refs2", scratch_dir());
    mkdir(refs, 0755);
    snprintf(dir, sizeof dir, "%s/sxm", refs);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/other", refs);
    mkdir(dir, 0755);
    results_file("refs2/sxm/ref.json", "refhost", all_r);
    scratch_file("refs2/sxm/reference.ini", "[reference]\nlabel = Test SXM\nfiles = ref.json\ndatasheet = h100-sxm\n"
                                            "[provenance]\nsource = test\n");
    results_file("refs2/other/ref.json", "otherhost", all_o);
    scratch_file("refs2/other/reference.ini", "[reference]\nlabel = Test H200\nfiles = ref.json\n"
                                              "datasheet = h200-sxm\n[provenance]\nsource = test\n");
    setenv("MLBENCH_REFERENCE_DIR", refs, 1);

    char *out, *errs;
    char *argv[] = { "compare", "--reference", "sxm", "--reference", "other", "--format", "table", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 7, argv, &out, &errs), 0);
    /* the path exists on no machine: neither column has the fp8 peak (H100 1.98, H200 1.98 PFLOP/s) */
    const char *line = strstr(out, "A not runnable here (" NO_FP8 "), B absent");
    assert_non_null(line);
    /* cuBLASLt has fp8: the H100's column gets its peak there, as before */
    assert_non_null(strstr(out, "A 1.98 PFLOP/s (datasheet), B 1.45 PFLOP/s"));
    /* a skip for the run's setup is no path's: the H100's tf32 still from its datasheet */
    assert_non_null(strstr(out, "A 495 TFLOP/s (datasheet)"));
    free(out);
    free(errs);

    argv[6] = "json";
    assert_int_equal(run_captured(mb_cmd_compare, 7, argv, &out, &errs), 0);
    cJSON *doc = cJSON_Parse(out);
    assert_non_null(doc);
    const cJSON *fp8 = json_case(doc, "gemm/cublas/dtype=fp8");
    for (int i = 0; i < 2; i++) {
        assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "rate"), i)));
        assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "rate_from"), i)));
    }
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(fp8, "status"), 1)->valuestring, "absent");
    cJSON_Delete(doc);
    free(out);
    free(errs);
    unsetenv("MLBENCH_REFERENCE_DIR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratios_and_geomean), cmocka_unit_test(test_one_side_only),
        cmocka_unit_test(test_no_datasheet_where_no_path),
        cmocka_unit_test(test_price),              cmocka_unit_test(test_context_differences),
        cmocka_unit_test(test_cmd),                cmocka_unit_test(test_machine_label_names_the_hardware),
        cmocka_unit_test(test_machine_label_ties), cmocka_unit_test(test_price_by_label_and_case_labels),
        cmocka_unit_test(test_unlike_machines_both_views), cmocka_unit_test(test_price_names_listed),
        cmocka_unit_test(test_human_figures),         cmocka_unit_test(test_unlike_machines_text),
        cmocka_unit_test(test_kinds_across_backends), cmocka_unit_test(test_noisy_marked),
        cmocka_unit_test(test_state_words),           cmocka_unit_test(test_device_kinds_apart),
        cmocka_unit_test(test_device_kinds_every_view), cmocka_unit_test(test_no_datasheet_for_unrunnable),
        cmocka_unit_test(test_cached_copy_not_a_best),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
