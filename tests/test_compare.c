/* test_compare.c: `mlbench compare` on two hand-made results files
 * (tests/data/gap_here.json, gap_there.json); expected figures by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analysis.h"
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
    /* fp8 failed here: no ratio, and the gemm geomean leaves it out */
    const mb_compare_row *fp8 = row(&f->c, "gemm/cublaslt/dtype=fp8,k=8192,m=8192,n=8192");
    assert_true(fp8->everywhere);
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
    assert_non_null(strstr(out, "1.73x (2)"));
    assert_non_null(strstr(out, "only on B"));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratios_and_geomean), cmocka_unit_test(test_one_side_only),
        cmocka_unit_test(test_price),              cmocka_unit_test(test_context_differences),
        cmocka_unit_test(test_cmd),                cmocka_unit_test(test_machine_label_names_the_hardware),
        cmocka_unit_test(test_machine_label_ties), cmocka_unit_test(test_price_by_label_and_case_labels),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
