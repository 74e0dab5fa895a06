/* test_reference.c: reference machines (results/reference/NAME): the shipped
 * H100's provenance against its files' own context, joining files by id,
 * `compare --reference` (measured first, datasheet cells marked and kept out
 * of the geometric means) and `gap --target NAME` (per stage: measured where
 * the reference has a case, else the datasheet, else kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analysis.h"
#include "compare.h"
#include "formulas.h"
#include "gap_test_util.h"
#include "paths.h"
#include "reference.h"
#include "results.h"

/* ---- the shipped references ------------------------------------------------------ */

static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
    o = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(o, b) : o;
}

/* Every [provenance] figure must be what the files themselves say. */
static void check_provenance(const mb_reference *r, const char *file, char *earliest, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    cJSON *doc = NULL;
    mb_err err = { 0 };
    if (mb_results_load(path, &doc, &err))
        fail_msg("%s", err.msg);
    const cJSON *ctx = at(doc, "context", NULL);
    const cJSON *gpus = at(ctx, "gpus", NULL);
    assert_string_equal(mb_reference_get(r, "mlbench_commit"), at(doc, "mlbench", "git")->valuestring);
    assert_string_equal(mb_reference_get(r, "driver"), at(ctx, "gpu_software", "driver")->valuestring);
    assert_string_equal(mb_reference_get(r, "cuda"), at(ctx, "gpu_software", "cuda_driver_api")->valuestring);
    assert_string_equal(mb_reference_get(r, "gpu"), at(cJSON_GetArrayItem(gpus, 0), "name", NULL)->valuestring);
    assert_int_equal(atoi(mb_reference_get(r, "gpu_count")), cJSON_GetArraySize(gpus));
    const char *started = at(doc, "started_utc", NULL)->valuestring;
    if (earliest[0] == '\0' || strcmp(started, earliest) < 0)
        snprintf(earliest, len, "%s", started);
    cJSON_Delete(doc);
}

/* A shipped reference loaded by name, each file's provenance checked, its cases joined by id (no id twice, each
 * saying its file); returns the usable cases and the one-step (waves = 0) membw cases among them. */
static int load_shipped(const char *name, int n_files_expected, mb_reference *r, int *membw_waves0)
{
    unsetenv("MLBENCH_REFERENCE_DIR");
    mb_err err = { 0 };
    if (mb_reference_load(name, r, &err))
        fail_msg("%s", err.msg);
    /* every file the ini lists ("files = a, b, c") */
    char earliest[64] = "", files[256];
    snprintf(files, sizeof files, "%s", mb_ini_get(&r->ini, "reference", "files"));
    int n_files = 0;
    for (char *save = NULL, *f = strtok_r(files, ", ", &save); f; f = strtok_r(NULL, ", ", &save), n_files++)
        check_provenance(r, f, earliest, sizeof earliest);
    assert_int_equal(n_files, n_files_expected);
    assert_string_equal(mb_reference_get(r, "measured_utc"), earliest);
    assert_non_null(r->sheet);
    assert_true(mb_datasheet_is_gpu(r->sheet));
    assert_non_null(strstr(mb_ceilings_label(&r->measured), "(reference)"));
    int usable = 0;
    *membw_waves0 = 0;
    for (int i = 0; i < r->measured.n_cases; i++) {
        /* the memory figures include the waves = 0 grid (the faster one: the first run had only the one-wave grid) */
        *membw_waves0 += r->measured.cases[i].usable && strncmp(r->measured.cases[i].id, "membw/cuda/", 11) == 0 &&
                         strstr(r->measured.cases[i].id, "waves=0") != NULL;
        for (int j = i + 1; j < r->measured.n_cases; j++)
            assert_string_not_equal(r->measured.cases[i].id, r->measured.cases[j].id);
        assert_true(cJSON_IsString(cJSON_GetObjectItem(r->measured.cases[i].json, "reference_file")));
        usable += r->measured.cases[i].usable;
    }
    return usable;
}

static void test_shipped_h100(void **state)
{
    (void)state;
    mb_reference r;
    int membw_waves0;
    int usable = load_shipped("h100-sxm", 3, &r, &membw_waves0); /* membw-peak-launch.json, all.json, gpu-verify */
    assert_true(r.measured.n_cases > 77); /* all.json's 77 plus the other files' own */
    assert_true(usable > 50);
    assert_int_equal(membw_waves0, 4); /* read, write, copy, triad */
    mb_reference_free(&r);
}

/* The H200's: the GPU cases of `all`, then the GEMM and conv cases again (the first file's filter left cuBLASLt
 * out): every GEMM of the suite is there, from the second file, and no compute case is noisy in either run. */
static void test_shipped_h200(void **state)
{
    (void)state;
    mb_reference r;
    int membw_waves0;
    int usable = load_shipped("h200-sxm", 2, &r, &membw_waves0); /* all-gpu.json, gemm-conv.json */
    assert_int_equal(membw_waves0, 4);
    int lt = 0, compute = 0;
    for (int i = 0; i < r.measured.n_cases; i++) {
        const mb_case_ref *c = &r.measured.cases[i];
        const char *file = cJSON_GetObjectItem(c->json, "reference_file")->valuestring;
        if (strncmp(c->id, "gemm/cublaslt/", 14) == 0) {
            lt++;
            assert_string_equal(file, "gemm-conv.json");
        }
        if (strncmp(c->id, "gemm/", 5) == 0 || strncmp(c->id, "conv/", 5) == 0 || strncmp(c->id, "peak/", 5) == 0) {
            compute++;
            assert_true(c->usable);
            assert_false(c->noisy);
        }
    }
    assert_int_equal(lt, 7);       /* fp64, fp32, tf32, fp16, bf16, fp8, int8 */
    assert_int_equal(compute, 15); /* 9 GEMM, 3 conv, 3 peak */
    assert_true(usable >= 56);     /* the 59 GPU cases of all but the three collectives (one GPU) */
    mb_reference_free(&r);
}

static void test_unknown_name(void **state)
{
    (void)state;
    unsetenv("MLBENCH_REFERENCE_DIR");
    mb_reference r;
    mb_err err = { 0 };
    assert_int_equal(mb_reference_load("no-such-machine", &r, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "no-such-machine"));
    assert_non_null(strstr(err.msg, "h100-sxm")); /* the known ones are named */
    assert_non_null(strstr(err.msg, "h200-sxm"));
    assert_false(mb_reference_exists("../reference/h100-sxm")); /* names, never paths */
    assert_false(mb_reference_exists(".."));
    assert_true(mb_reference_exists("h100-sxm"));
}

/* ---- scratch references built from the hand-made results files -------------------- */

static cJSON *load_doc(const char *path)
{
    cJSON *doc = NULL;
    mb_err err = { 0 };
    if (mb_results_load(path, &doc, &err))
        fail_msg("%s", err.msg);
    return doc;
}

static cJSON *load_doc_path(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return load_doc(path);
}

static void write_doc(const char *dir, const char *name, cJSON *doc)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = cJSON_Print(doc);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(doc);
}

/* <scratch>/refs/NAME/ with reference.ini listing `files`. */
static const char *make_ref(const char *name, const char *files, const char *datasheet)
{
    static char dir[1100];
    char refs[1024], ini[1200];
    snprintf(refs, sizeof refs, "%s/refs", scratch_dir());
    mkdir(refs, 0755);
    snprintf(dir, sizeof dir, "%s/%s", refs, name);
    mkdir(dir, 0755);
    snprintf(ini, sizeof ini, "%s/reference.ini", dir);
    FILE *f = fopen(ini, "w");
    assert_non_null(f);
    fprintf(f, "[reference]\nlabel = Test %s\nfiles = %s\n", name, files);
    if (datasheet)
        fprintf(f, "datasheet = %s\n", datasheet);
    fprintf(f, "[provenance]\nsource = test\n");
    fclose(f);
    setenv("MLBENCH_REFERENCE_DIR", refs, 1);
    return dir;
}

static void set_rate(cJSON *c, double v)
{
    cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "rate"), "median"), v);
}

static void test_join_first_file_wins(void **state)
{
    (void)state;
    const char *dir = make_ref("joined", "a.json, b.json", NULL);
    cJSON *a = load_doc(data_path("gap_there.json"));
    cJSON *b = load_doc(data_path("gap_there.json"));
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(a, "cases"));
    set_rate(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "cases"), 0), 111);
    cJSON *bc = cJSON_GetObjectItem(b, "cases");
    set_rate(cJSON_GetArrayItem(bc, 0), 222);
    cJSON *extra = cJSON_Duplicate(cJSON_GetArrayItem(bc, 0), true);
    cJSON_ReplaceItemInObject(extra, "id", cJSON_CreateString("gemm/cublaslt/only-in-b"));
    cJSON_AddItemToArray(bc, extra);
    write_doc(dir, "a.json", a);
    write_doc(dir, "b.json", b);

    mb_reference r;
    mb_err err = { 0 };
    if (mb_reference_load("joined", &r, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(r.measured.n_cases, n + 1);
    assert_true(r.measured.cases[0].rate == 111);
    assert_string_equal(cJSON_GetObjectItem(r.measured.cases[0].json, "reference_file")->valuestring, "a.json");
    const mb_case_ref *last = &r.measured.cases[r.measured.n_cases - 1];
    assert_string_equal(last->id, "gemm/cublaslt/only-in-b");
    assert_true(last->rate == 222);
    assert_string_equal(cJSON_GetObjectItem(last->json, "reference_file")->valuestring, "b.json");
    assert_null(r.sheet);
    assert_string_equal(mb_ceilings_label(&r.measured), "Test joined (reference)");
    mb_reference_free(&r);

    /* a file name with a path in it, or a missing file: a clear error */
    make_ref("escapes", "../joined/a.json", NULL);
    assert_int_equal(mb_reference_load("escapes", &r, &err), MB_EUSAGE);
    assert_non_null(strstr(err.msg, "file name"));
    make_ref("missing", "nope.json", NULL);
    mb_err err2 = { 0 };
    assert_int_not_equal(mb_reference_load("missing", &r, &err2), MB_OK);
    assert_non_null(strstr(err2.msg, "nope.json"));
}

/* ---- compare --reference ------------------------------------------------------------- */

static const mb_compare_row *row(const mb_compare *c, const char *id)
{
    for (int r = 0; r < c->n_rows; r++)
        if (strcmp(c->rows[r].id, id) == 0)
            return &c->rows[r];
    fail_msg("no row %s", id);
    return NULL;
}

static void test_compare_fills_from_datasheet(void **state)
{
    (void)state;
    const char *dir = make_ref("there", "there.json", "h100-sxm");
    write_doc(dir, "there.json", load_doc(data_path("gap_there.json")));
    mb_reference r;
    mb_ceilings m[2];
    mb_ini keys;
    mb_compare c;
    mb_err err = { 0 };
    if (mb_reference_load("there", &r, &err) || mb_ini_load_gap("compare.ini", &keys, &err) ||
        mb_ceilings_load(data_path("gap_here.json"), &m[0], &err))
        fail_msg("%s", err.msg);
    m[1] = r.measured;
    memset(&r.measured, 0, sizeof r.measured);
    if (mb_compare_build(m, 2, NULL, 0, NULL, 0, &keys, &c, &err))
        fail_msg("%s", err.msg);
    /* the GPU's gemm mean (compare keeps the host CPU's apart) */
    int gg = 0;
    while (gg < c.n_geo && (strcmp(c.geo[gg].component, "gemm") || strcmp(c.geo[gg].device, "gpu")))
        gg++;
    assert_true(gg < c.n_geo);
    double geo_before = c.geo[gg].geomean[1];
    if (mb_compare_fill_datasheet(&c, 1, r.sheet, &err))
        fail_msg("%s", err.msg);

    /* measured on the reference: kept as measured */
    const mb_compare_row *g8 = row(&c, "gemm/cublaslt/dtype=bf16,k=8192,m=8192,n=8192");
    assert_false(g8->from_sheet[1]);
    CLOSE(g8->rate[1], 1200);
    /* not measured there: the datasheet's dense tf32 peak, marked; no ratio
     * against the unverified case here */
    const mb_compare_row *tf32 = row(&c, "gemm/cublaslt/dtype=tf32,k=8192,m=8192,n=8192");
    assert_true(tf32->from_sheet[1]);
    CLOSE(tf32->rate[1], 494.7);
    assert_true(tf32->ratio[1] < 0);
    /* pinned H2D: PCIe 5.0 x16 from the datasheet, ratio to the measured 25 GB/s */
    const mb_compare_row *h2d = row(&c, "copy/cuda/direction=h2d,memory=pinned,size=67108864");
    assert_true(h2d->from_sheet[1]);
    CLOSE(h2d->rate[1], mb_pcie_gbps(5, 16));
    CLOSE(h2d->ratio[1], mb_pcie_gbps(5, 16) / 25);
    assert_false(h2d->everywhere); /* a datasheet figure is not a run: not "on every machine" */
    /* no datasheet figure: latencies, collectives, host work on a GPU sheet */
    assert_false(row(&c, "launch/cuda/count=1000,op=stream_sync")->from_sheet[1]);
    assert_false(row(&c, "allreduce/nccl/batch=1,dtype=bf16,inplace=0,size=67108864")->from_sheet[1]);
    assert_false(row(&c, "gemm/openblas/dtype=fp32,k=1024,m=1024,n=1024")->from_sheet[1]);
    /* the geometric means are of measured figures only */
    CLOSE(c.geo[gg].geomean[1], geo_before);
    CLOSE(c.geo[gg].geomean[1], sqrt(2.0 * 1.5));
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
    mb_ini_free(&keys);
    mb_reference_free(&r);

    /* through the command: the JSON says which figure is which */
    char *out, *errs;
    char *argv[] = { "compare", (char *)data_path("gap_here.json"), "--reference", "there", "--format", "json", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 6, argv, &out, &errs), 0);
    assert_non_null(strstr(out, "\"datasheet\""));
    assert_non_null(strstr(out, "\"measured\""));
    free(out);
    free(errs);
    char *bad[] = { "compare", (char *)data_path("gap_here.json"), "--reference", "nowhere", NULL };
    assert_int_equal(run_captured(mb_cmd_compare, 4, bad, &out, &errs), 2);
    assert_non_null(strstr(errs, "no reference machine 'nowhere'"));
    free(out);
    free(errs);
}

/* ---- gap --target NAME ------------------------------------------------------------------ */

static cJSON *projection_of(const char *target)
{
    char *out, *errs;
    char *argv[] = { "gap", "--run", (char *)data_path("gap_run.json"), "--ceilings",
                     (char *)data_path("gap_here.json"), "--target", (char *)target, "--format", "json", NULL };
    if (run_captured(mb_cmd_gap, 9, argv, &out, &errs) != 0)
        fail_msg("gap --target %s: %s", target, errs);
    cJSON *doc = cJSON_Parse(out);
    free(out);
    free(errs);
    assert_non_null(doc);
    return doc;
}

static const cJSON *stages_of(const cJSON *doc)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "projection"), "stages");
}

/* gap_there.json without its copy case: the reference measured no copy. */
static void write_there_without_copies(const char *dir)
{
    cJSON *doc = load_doc(data_path("gap_there.json"));
    cJSON *cases = cJSON_GetObjectItem(doc, "cases");
    for (int i = cJSON_GetArraySize(cases) - 1; i >= 0; i--)
        if (strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(cases, i), "component")->valuestring, "copy") == 0)
            cJSON_DeleteItemFromArray(cases, i);
    write_doc(dir, "there.json", doc);
    write_doc(dir, "../there-no-copy.json", load_doc_path(dir, "there.json"));
}

static void test_gap_target_measured_first(void **state)
{
    (void)state;
    const char *dir = make_ref("there", "there.json", "h100-sxm");
    write_there_without_copies(dir);
    char there_file[1200];
    snprintf(there_file, sizeof there_file, "%s/../there-no-copy.json", dir);
    char sheet[4096];
    mb_config_path(sheet, sizeof sheet, "hardware/h100-sxm.ini");
    cJSON *ref = projection_of("there");
    cJSON *meas = projection_of(there_file);
    cJSON *ds = projection_of(sheet);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ref, "projection"), "kind")->valuestring,
                        "reference");
    int n = cJSON_GetArraySize(stages_of(ref)), n_measured = 0, n_sheet = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *r = cJSON_GetArrayItem(stages_of(ref), i);
        const cJSON *m = cJSON_GetArrayItem(stages_of(meas), i);
        const cJSON *d = cJSON_GetArrayItem(stages_of(ds), i);
        const cJSON *from = cJSON_GetObjectItem(r, "rate_there_from");
        double there = cJSON_GetObjectItem(r, "seconds_per_step_there")->valuedouble;
        if (cJSON_IsTrue(cJSON_GetObjectItem(m, "projected"))) {
            assert_string_equal(from->valuestring, "measured");
            CLOSE(there, cJSON_GetObjectItem(m, "seconds_per_step_there")->valuedouble);
            n_measured++;
        } else if (cJSON_IsTrue(cJSON_GetObjectItem(d, "projected"))) {
            assert_string_equal(from->valuestring, "datasheet");
            CLOSE(there, cJSON_GetObjectItem(d, "seconds_per_step_there")->valuedouble);
            n_sheet++;
        } else {
            assert_true(cJSON_IsNull(from));
            assert_false(cJSON_IsTrue(cJSON_GetObjectItem(r, "projected")));
        }
    }
    /* both kinds: measured GEMM and disk, a copy only the datasheet knows */
    assert_true(n_measured > 0);
    assert_true(n_sheet > 0);
    cJSON_Delete(ref);
    cJSON_Delete(meas);
    cJSON_Delete(ds);
}

static int teardown_all(void **state)
{
    (void)state;
    rm_scratch();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_h100),
        cmocka_unit_test(test_shipped_h200),
        cmocka_unit_test(test_unknown_name),
        cmocka_unit_test(test_join_first_file_wins),
        cmocka_unit_test(test_compare_fills_from_datasheet),
        cmocka_unit_test(test_gap_target_measured_first),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_all);
}
