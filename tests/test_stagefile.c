/* test_stagefile.c: the stage-metrics file reader (docs/stage-format.md) and
 * the results reader of the analysis: every malformed input class gives
 * MB_EUSAGE (exit 2) with its location. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analysis.h"
#include "ceilings.h"
#include "gap_test_util.h"
#include "run_read.h"
#include "stages.h"

#define HEAD "{\"format\":\"mlbench-stages\",\"version\":1,"

/* Reads `text` as file `name`: expects MB_EUSAGE and every `want` substring. */
static void expect_error(const char *name, const char *text, const char *want1, const char *want2)
{
    mb_run r;
    mb_err err = { 0 };
    const char *p = scratch_file(name, text);
    int rc = mb_run_read(p, &r, &err);
    if (rc != MB_EUSAGE || !strstr(err.msg, want1) || (want2 && !strstr(err.msg, want2)))
        fail_msg("%s: rc %d, message '%s' (wanted '%s'%s%s)", name, rc, err.msg, want1, want2 ? " and " : "",
                 want2 ? want2 : "");
    /* the message names the file */
    assert_non_null(strstr(err.msg, name));
}

static void test_reads_json(void **s)
{
    (void)s;
    mb_run r;
    mb_err err = { 0 };
    assert_int_equal(mb_run_read(data_path("gap_run.json"), &r, &err), MB_OK);
    assert_string_equal(r.kind, "stage-file");
    assert_int_equal(r.n_stages, 7);
    assert_int_equal(r.steps, 100);
    CLOSE(r.total_seconds, 300);
    CLOSE(r.step_seconds, 3);
    CLOSE(r.gpu_utilization, 0.45);
    CLOSE(r.cpu_utilization, 0.60);
    assert_string_equal(r.stages[0].component, "disk");
    assert_string_equal(r.stages[0].device, "cpu");
    assert_int_equal(r.stages[0].block_size, 131072);
    assert_string_equal(r.stages[0].work_unit, "byte");
    assert_string_equal(r.stages[2].device, "gpu");
    assert_int_equal(r.stages[2].count, 10000);
    assert_string_equal(r.stages[4].work_unit, "launch");
    assert_string_equal(r.stages[5].work_unit, "sync");
    assert_null(r.stages[6].device); /* 'other' has no usual place */
    assert_non_null(strstr(r.stages[3].source, "stages[3]"));
    mb_run_free(&r);
}

static void test_reads_csv_like_json(void **s)
{
    (void)s;
    mb_run a, b;
    mb_err err = { 0 };
    assert_int_equal(mb_run_read(data_path("gap_run.json"), &a, &err), MB_OK);
    int rc = mb_run_read(data_path("gap_run.csv"), &b, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(a.n_stages, b.n_stages);
    assert_int_equal(a.steps, b.steps);
    CLOSE(a.total_seconds, b.total_seconds);
    for (int i = 0; i < a.n_stages; i++) {
        assert_string_equal(a.stages[i].name, b.stages[i].name);
        assert_string_equal(a.stages[i].component, b.stages[i].component);
        CLOSE(a.stages[i].work, b.stages[i].work);
        CLOSE(a.stages[i].seconds, b.stages[i].seconds);
        assert_int_equal(a.stages[i].block_size, b.stages[i].block_size);
        assert_int_equal(a.stages[i].count, b.stages[i].count);
    }
    assert_non_null(strstr(b.stages[3].source, "gap_run.csv:11"));
    mb_run_free(&a);
    mb_run_free(&b);
}

static void test_overlap_warning(void **s)
{
    (void)s;
    mb_run r;
    mb_err err = { 0 };
    const char *p = scratch_file("overlap.json", HEAD "\"run\":{\"total_seconds\":5},\"stages\":["
                                                      "{\"name\":\"a\",\"component\":\"other\",\"seconds\":4},"
                                                      "{\"name\":\"b\",\"component\":\"other\",\"seconds\":4}]}");
    assert_int_equal(mb_run_read(p, &r, &err), MB_OK);
    assert_int_equal(r.n_warnings, 1);
    assert_non_null(strstr(r.warnings[0], "overlap"));
    mb_run_free(&r);
}

static void test_json_errors(void **s)
{
    (void)s;
    expect_error("trunc.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"sec", "trunc.json:1:",
                 "ends early");
    expect_error("syntax.json", HEAD "\n\"stages\": [\n  {\"name\": \"a\",, \"component\": \"other\"}]}",
                 "syntax.json:3:", "malformed JSON");
    expect_error("fmt.json", "{\"version\":1,\"stages\":[]}", "format", NULL);
    /* a JSON object of one's own (a per-module timing log): what --run takes, a trace or a stage file */
    expect_error("own.json", "{\"model\":\"granite\",\"trace\":[{\"module\":\"x\",\"ms\":3}]}",
                 "neither a profiler trace (no \"traceEvents\") nor a stage file", "torch.profiler trace");
    expect_error("otherfmt.json", "{\"format\":\"other\",\"version\":1,\"stages\":[]}",
                 "format: expected \"mlbench-stages\"", NULL);
    expect_error("ver.json", "{\"format\":\"mlbench-stages\",\"version\":3,\"stages\":[]}", "version: 3",
                 "reads version 1 and 2");
    expect_error("comp.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"gpu\",\"seconds\":1}]}",
                 "stages[0].component", "not one of");
    expect_error("units.json",
                 HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":1},"
                      "{\"name\":\"b\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"bytes\":1e9,\"seconds\":1}]}",
                 "stages[1].bytes", "units do not match");
    expect_error("zero.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"disk\",\"pattern\":\"random\","
                                   "\"bytes\":0,\"seconds\":1}]}",
                 "stages[0].bytes", "greater than zero");
    expect_error("neg.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":-3}]}",
                 "stages[0].seconds", "negative");
    expect_error("inf.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":1e999}]}",
                 "stages[0].seconds", "finite");
    expect_error("nan.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":NaN}]}",
                 "nan.json:1:", "malformed JSON");
    expect_error("str.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":\"5\"}]}",
                 "stages[0].seconds", "expected a number");
    expect_error("nowork.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"launch\",\"seconds\":5}]}",
                 "stages[0].launches", "needs its work");
    expect_error("notime.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"launch\",\"launches\":5}]}",
                 "stages[0].seconds", "measured time");
    expect_error("perstep.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds_per_step\":5}]}",
                 "stages[0].seconds_per_step", "step count");
    expect_error("both.json", HEAD "\"run\":{\"steps\":2},\"stages\":[{\"name\":\"a\",\"component\":\"other\","
                                   "\"seconds\":5,\"seconds_per_step\":2}]}",
                 "stages[0]", "not both");
    expect_error("dtype.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"gemm\",\"flops\":1,\"seconds\":1}]}",
                 "stages[0].dtype", "needs a dtype");
    expect_error("baddtype.json",
                 HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"gemm\",\"dtype\":\"fp7\",\"flops\":1,\"seconds\":1}]}",
                 "stages[0].dtype", "unknown dtype");
    expect_error("dir.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"copy\",\"bytes\":1,\"seconds\":1}]}",
                 "stages[0].direction", "needs a direction");
    expect_error("ranks.json",
                 HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"allreduce\",\"bytes\":1,\"seconds\":1,\"ranks\":1}]}",
                 "stages[0].ranks", "2 or more");
    expect_error("unknown.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"second\":1}]}",
                 "stages[0].second", "unknown key");
    expect_error("dup.json", HEAD "\"stages\":[{\"name\":\"a\",\"name\":\"b\",\"component\":\"other\",\"seconds\":1}]}",
                 "stages[0].name", "twice");
    expect_error("util.json", HEAD "\"run\":{\"gpu_utilization\":45},\"stages\":[{\"name\":\"a\",\"component\":\"other\","
                                   "\"seconds\":1}]}",
                 "run.gpu_utilization", "fraction");
    expect_error("empty.json", HEAD "\"stages\":[]}", "no stages", NULL);
    expect_error("blank.json", "  \n", "empty file", NULL);
    expect_error("bs.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"disk\",\"pattern\":\"random\","
                                 "\"block_size\":\"12q\",\"bytes\":1,\"seconds\":1}]}",
                 "stages[0].block_size", "size in bytes");
}

static void test_csv_errors(void **s)
{
    (void)s;
    expect_error("nover.csv", "name,component,seconds\na,other,1\n", "nover.csv:1:", "mlbench-stages version 1");
    expect_error("ver3.csv", "# mlbench-stages version 3\nname,component,seconds\n", "ver3.csv:1:", "version 3");
    expect_error("nan.csv", "# mlbench-stages version 1\nname,component,seconds\na,other,nan\n", "nan.csv:3:",
                 "finite");
    expect_error("cells.csv", "# mlbench-stages version 1\nname,component,seconds\na,other\n", "cells.csv:3:",
                 "truncated");
    expect_error("col.csv", "# mlbench-stages version 1\nname,component,secs\n", "col.csv:2:", "unknown column 'secs'");
    expect_error("num.csv", "# mlbench-stages version 1\nname,component,seconds\na,other,5s\n", "num.csv:3:",
                 "not a number");
    expect_error("neg.csv", "# mlbench-stages version 1\nname,component,seconds\na,other,-1\n",
                 "neg.csv:3: column 'seconds'", "negative");
    expect_error("units.csv", "# mlbench-stages version 1\nname,component,dtype,bytes,seconds\na,conv,fp16,10,1\n",
                 "units.csv:3: column 'bytes'", "units do not match");
    expect_error("run.csv", "# mlbench-stages version 1\n# gpu_utilisation = 0.4\n", "run.csv:2:",
                 "unknown run figure");
    expect_error("quote.csv", "# mlbench-stages version 1\nname,component,seconds\n\"a,other,1\n", "quote.csv:3:",
                 "unterminated quote");
}

/* mb_run_read sends a file with "traceEvents" to the trace reader, whatever
 * its extension, and a stage file to the stage reader. */
static void test_dispatch(void **s)
{
    (void)s;
    mb_run r;
    mb_err err = { 0 };
    const char *p = scratch_file("looks_like_stages.csv", "{\"traceEvents\": [ ");
    int rc = mb_run_read(p, &r, &err);
    assert_int_not_equal(rc, MB_OK);
    assert_null(strstr(err.msg, "mlbench-stages")); /* not the stage reader's complaint */
    const char *shared = getenv("MLBENCH_SHARED");
    char fixture[4096];
    snprintf(fixture, sizeof fixture, "%s/fixtures/kineto/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
             shared ? shared : "");
    if (shared && access(fixture, R_OK) == 0) {
        mb_err e2 = { 0 };
        rc = mb_run_read(fixture, &r, &e2);
        if (rc == MB_OK) {
            assert_string_equal(r.kind, "pytorch-trace");
            mb_run_free(&r);
        } else {
            /* the trace reader may refuse a CPU-only trace, but it must be the one answering */
            assert_null(strstr(e2.msg, "mlbench-stages"));
        }
    } else if (getenv("CI")) {
        fail_msg("CI is set and the fixture %s is missing", fixture);
    }
}

/* ---- results files as the analysis reads them ----------------------------------------- */

static void expect_results_error(const char *name, const char *text, const char *want)
{
    mb_ceilings c;
    mb_err err = { 0 };
    const char *p = scratch_file(name, text);
    int rc = mb_ceilings_load(p, &c, &err);
    if (rc != MB_EUSAGE || !strstr(err.msg, want) || !strstr(err.msg, name))
        fail_msg("%s: rc %d, message '%s' (wanted '%s')", name, rc, err.msg, want);
}

#define RHEAD "{\"schema\":\"mlbench-results\",\"schema_version\":1,\"cases\":["
#define CASE_OK(rate) \
    "{\"id\":\"x/y/a=1\",\"component\":\"x\",\"backend\":\"y\",\"status\":\"ok\",\"work_unit\":\"byte\"," \
    "\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":" rate "},\"verification\":{\"status\":\"passed\"}}"

static void test_results_errors(void **s)
{
    (void)s;
    expect_results_error("r_ver.json", "{\"schema\":\"mlbench-results\",\"schema_version\":9,\"cases\":[]}",
                         "schema_version");
    expect_results_error("r_trunc.json", RHEAD CASE_OK("1"), "r_trunc.json:1:");
    expect_results_error("r_schema.json", "{\"schema_version\":1,\"cases\":[]}", "schema");
    expect_results_error("r_rate.json", RHEAD CASE_OK("\"fast\"") "]}", "cases[0].rate.median");
    expect_results_error("r_neg.json", RHEAD CASE_OK("1") "," CASE_OK("-2") "]}", "cases[1].rate.median");
    expect_results_error("r_status.json",
                         RHEAD "{\"id\":\"x\",\"component\":\"x\",\"backend\":\"y\",\"status\":\"great\"}]}",
                         "cases[0].status");
    expect_results_error("r_id.json", RHEAD "{\"component\":\"x\",\"backend\":\"y\",\"status\":\"ok\"}]}", "cases[0].id");
    /* a good one: usable only with status ok and verification passed */
    mb_ceilings c;
    mb_err err = { 0 };
    const char *p = scratch_file("r_good.json", RHEAD CASE_OK("2.5") "]}");
    assert_int_equal(mb_ceilings_load(p, &c, &err), MB_OK);
    assert_true(c.cases[0].usable);
    CLOSE(c.cases[0].rate_abs, 2.5e9);
    mb_ceilings_free(&c);
}

static void test_cmd_exit_2_with_location(void **s)
{
    (void)s;
    char *out, *err;
    const char *p = scratch_file("cmd_units.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":1},"
                                                        "{\"name\":\"b\",\"component\":\"sync\",\"bytes\":5,\"seconds\":1}]}");
    char *argv[] = { "gap", "--run", (char *)p, "--ceilings", (char *)data_path("gap_here.json"), NULL };
    assert_int_equal(run_captured(mb_cmd_gap, 5, argv, &out, &err), 2);
    assert_non_null(strstr(err, "cmd_units.json: stages[1].bytes"));
    assert_string_equal(out, "");
    free(out);
    free(err);
}

/* Numbers beyond any real run, and files or nesting beyond the bounds of
 * docs/reliability.md, are errors naming the field (not inf in a table, not
 * undefined behaviour converting 3e23 calls to an integer). */
static void test_hostile_values(void **s)
{
    (void)s;
    expect_error("h_flops.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"gemm\",\"flops\":1e308,"
                                      "\"seconds\":1}]}", "stages[0].flops", "beyond any real run");
    expect_error("h_calls.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"gemm\",\"flops\":1e12,"
                                      "\"calls\":3e23,\"seconds\":1}]}", "stages[0].calls", "beyond any real run");
    expect_error("h_rate.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"gemm\",\"flops\":1e12,"
                                     "\"seconds\":1e-308}]}", "stages[0].seconds", "not a finite rate");
    expect_error("h_per_step.json", HEAD "\"run\":{\"steps\":1000000},\"stages\":[{\"name\":\"a\",\"component\":"
                                         "\"gemm\",\"flops_per_step\":1e28,\"seconds\":1}]}",
                 "flops_per_step", "beyond any real run");
    expect_error("h_calls.csv", "# mlbench-stages version 1\nname,component,calls,flops,seconds\n"
                                "a,gemm,318446744073709551616000,1e12,1\n", "calls", "beyond any real run");
    /* 1001 nested arrays: cJSON's limit, said as such */
    char text[4096];
    int n = snprintf(text, sizeof text, HEAD "\"stages\":");
    for (int i = 0; i < 1001; i++)
        text[n++] = '[';
    for (int i = 0; i < 1001; i++)
        text[n++] = ']';
    snprintf(text + n, sizeof text - (size_t)n, "}");
    expect_error("h_nested.json", text, "nested deeper than 1000 levels", NULL);
    n = snprintf(text, sizeof text, RHEAD);
    for (int i = 0; i < 1001; i++)
        text[n++] = '[';
    for (int i = 0; i < 1001; i++)
        text[n++] = ']';
    snprintf(text + n, sizeof text - (size_t)n, "]}");
    expect_results_error("h_nested_results.json", text, "nested deeper than 1000 levels");
}

static int group_teardown(void **state)
{
    (void)state;
    rm_scratch();
    return 0;
}

/* Version 2 (mlbench_simplify.py): isolated times, the simplify object, and
 * the errors that name the version or the mode a run stopped in. */
static void test_version2(void **s)
{
    (void)s;
    mb_run r;
    mb_err err = { 0 };
    const char *p = scratch_file("v2.json", "{\"format\":\"mlbench-stages\",\"version\":2,\"run\":{\"steps\":4},"
                                            "\"stages\":[{\"name\":\"a\",\"component\":\"other\","
                                            "\"seconds_per_step\":2,\"isolated_seconds_per_step\":0.5}],"
                                            "\"simplify\":{\"errors\":[{\"mode\":\"step\",\"error\":\"E: x\"}]}}");
    assert_int_equal(mb_run_read(p, &r, &err), MB_OK);
    assert_true(r.stages[0].has_isolated);
    CLOSE(r.stages[0].isolated_seconds, 2.0); /* 0.5 x 4 steps */
    CLOSE(r.stages[0].seconds, 8.0);
    assert_int_equal(r.n_warnings, 1);
    assert_non_null(strstr(r.warnings[0], "failed in mode 'step': E: x"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(r.evidence, "simplify"));
    mb_run_free(&r);
    p = scratch_file("v2.csv", "# mlbench-stages version 2\nname,component,seconds,isolated_seconds\na,other,3,1\n");
    assert_int_equal(mb_run_read(p, &r, &err), MB_OK);
    CLOSE(r.stages[0].isolated_seconds, 1.0);
    mb_run_free(&r);
    expect_error("v1iso.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":1,"
                               "\"isolated_seconds\":1}]}", "stages[0].isolated_seconds", "version 2");
    expect_error("v1iso.csv", "# mlbench-stages version 1\nname,component,seconds,isolated_seconds\na,other,3,1\n",
                 "v1iso.csv:3:", "version 2");
    expect_error("v1simp.json", HEAD "\"stages\":[{\"name\":\"a\",\"component\":\"other\",\"seconds\":1}],"
                                "\"simplify\":{}}", "simplify: unknown key", NULL);
    expect_error("iso0.json", "{\"format\":\"mlbench-stages\",\"version\":2,\"stages\":[{\"name\":\"a\","
                              "\"component\":\"other\",\"seconds\":1,\"isolated_seconds\":0}]}",
                 "isolated_seconds", "greater than zero");
    expect_error("intr.json", "{\"format\":\"mlbench-stages\",\"version\":2,"
                              "\"simplify\":{\"interrupted_in\":\"full\"}}", "no stages",
                 "interrupted in mode 'full'");
    expect_error("fail.json", "{\"format\":\"mlbench-stages\",\"version\":2,"
                              "\"simplify\":{\"errors\":[{\"mode\":\"full\",\"error\":\"KeyError: 'x'\"}]}}",
                 "failed in mode 'full'", "KeyError");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_json),      cmocka_unit_test(test_reads_csv_like_json),
        cmocka_unit_test(test_overlap_warning), cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_csv_errors),      cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_results_errors),  cmocka_unit_test(test_cmd_exit_2_with_location),
        cmocka_unit_test(test_hostile_values),    cmocka_unit_test(test_version2),
    };
    return cmocka_run_group_tests(tests, NULL, group_teardown);
}
