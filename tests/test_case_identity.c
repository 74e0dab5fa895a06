/* test_case_identity.c: the one rule for "the same case" across results
 * files (harness/analysis/compare/case_identity.h), with known answers against this
 * build's parameter tables, and compare / --baseline of the first H100 run's
 * results file (tests/data/h100_first_run.json, mlbench 24d4a23, the H100
 * reference until 2026-11-26) against a copy whose io_uring ids carry the
 * parameters the backend gained after it was written (registered, sqpoll,
 * iopoll). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <sys/stat.h>

#include "analysis.h"
#include "baseline.h"
#include "case_identity.h"
#include "compare.h"
#include "component.h"
#include "gap_test_util.h"
#include "params.h"
#include "reference.h"
#include "results.h"

#ifndef MB_SOURCE_DIR
#error "MB_SOURCE_DIR (the source tree) must be defined by CMake"
#endif

#define H100_FILE MB_SOURCE_DIR "/tests/data/h100_first_run.json"

/* The io_uring id as the first H100 run has it (written before the backend
 * gained registered, sqpoll and iopoll) and the same case's id now. */
#define URING_OLD "disk/io_uring/block_size=4096,file_size=536870912,ios_per_iter=0,mode=direct,pattern=random,qd=32,seed=0"
#define URING_NEW                                                                                                    \
    "disk/io_uring/block_size=4096,file_size=536870912,ios_per_iter=0,iopoll=off,mode=direct,pattern=random,qd=32," \
    "registered=auto,seed=0,sqpoll=off"

static bool uring_built_in(void)
{
    const mb_component_ops *ops = mb_registry_find("disk", "io_uring");
    return ops && !ops->params_unknown;
}

/* The defaults the known answers assume are this build's (kernels/disk/disk_io_uring.c). */
static void expect_default(const char *backend, const char *name, const char *def)
{
    const mb_component_ops *ops = mb_registry_find("disk", backend);
    assert_non_null(ops);
    const mb_param_spec *ps = mb_param_spec_find(ops->params, name);
    assert_non_null(ps);
    assert_string_equal(ps->def, def);
}

static void test_values_equal(void **state)
{
    (void)state;
    const mb_param_spec size = { "s", MB_P_SIZE, "1g", NULL, 0, -1, NULL };
    const mb_param_spec integer = { "i", MB_P_INT, "0", NULL, 0, -1, NULL };
    const mb_param_spec boolean = { "b", MB_P_BOOL, "false", NULL, 0, -1, NULL };
    const mb_param_spec choice = { "e", MB_P_ENUM, "off", "off|on", 0, -1, NULL };
    assert_true(mb_param_values_equal(&size, "4k", "4096"));
    assert_true(mb_param_values_equal(&size, "1g", "1073741824"));
    assert_false(mb_param_values_equal(&size, "4k", "4097"));
    assert_true(mb_param_values_equal(&integer, "032", "32"));
    assert_false(mb_param_values_equal(&integer, "32", "33"));
    assert_true(mb_param_values_equal(&boolean, "on", "true"));
    assert_false(mb_param_values_equal(&boolean, "on", "false"));
    assert_false(mb_param_values_equal(&choice, "on", "true")); /* a choice is its text */
    assert_false(mb_param_values_equal(NULL, "4k", "4096"));
    assert_true(mb_param_values_equal(NULL, "x", "x"));
}

static void test_uring_old_and_new_ids(void **state)
{
    (void)state;
    if (!uring_built_in())
        skip(); /* liburing absent at build time: io_uring's table is unknown here, exact ids only */
    expect_default("io_uring", "registered", "auto");
    expect_default("io_uring", "sqpoll", "off");
    expect_default("io_uring", "iopoll", "off");
    /* old id vs new id with the new parameters at their defaults: one case, both ways */
    assert_true(mb_case_ids_same(URING_OLD, URING_NEW));
    assert_true(mb_case_ids_same(URING_NEW, URING_OLD));
    /* a new parameter at a non-default value: another measurement */
    assert_false(mb_case_ids_same(URING_OLD, "disk/io_uring/block_size=4096,file_size=536870912,ios_per_iter=0,"
                                             "iopoll=off,mode=direct,pattern=random,qd=32,registered=auto,seed=0,"
                                             "sqpoll=on"));
    assert_false(mb_case_ids_same(URING_OLD, "disk/io_uring/block_size=4096,file_size=536870912,ios_per_iter=0,"
                                             "mode=direct,pattern=random,qd=32,registered=off,seed=0"));
    /* a shared parameter changed (qd 32 -> 1), new ones at defaults: another measurement */
    assert_false(mb_case_ids_same(URING_OLD, "disk/io_uring/block_size=4096,file_size=536870912,ios_per_iter=0,"
                                             "iopoll=off,mode=direct,pattern=random,qd=1,registered=auto,seed=0,"
                                             "sqpoll=off"));
    /* only some of the new parameters written: the rest still default */
    assert_true(mb_case_ids_same(URING_OLD, "disk/io_uring/block_size=4096,file_size=536870912,ios_per_iter=0,"
                                            "mode=direct,pattern=random,qd=32,seed=0,sqpoll=off"));
    /* submit came later still: batch is what every id before it measured, each another measurement */
    expect_default("io_uring", "submit", "batch");
    assert_true(mb_case_ids_same(URING_OLD, URING_NEW ",submit=batch"));
    assert_false(mb_case_ids_same(URING_OLD, URING_NEW ",submit=each"));
}

/* membw gained `waves` after the first H100 run: its ids
 * (tests/data/h100_first_run.json) are the one-wave grid, the default;
 * waves = 0 is another measurement. */
static void test_membw_waves_ids(void **state)
{
    (void)state;
    const char *old = "membw/cuda/blocks_per_sm=0,dtype=fp32,op=triad,size=0,threads=256";
    const mb_component_ops *ops = mb_registry_find("membw", "cuda");
    assert_non_null(ops);
    if (ops->params_unknown)
        skip(); /* a build without CUDA: the module's table is unknown here, exact ids only */
    const mb_param_spec *ps = mb_param_spec_find(ops->params, "waves");
    assert_non_null(ps);
    assert_string_equal(ps->def, "1");
    assert_true(mb_case_ids_same(old, "membw/cuda/blocks_per_sm=0,dtype=fp32,op=triad,size=0,threads=256,waves=1"));
    assert_false(mb_case_ids_same(old, "membw/cuda/blocks_per_sm=0,dtype=fp32,op=triad,size=0,threads=256,waves=0"));
}

/* pread is always built in: the rule's corners on its table. */
static void test_rule_on_pread(void **state)
{
    (void)state;
    expect_default("pread", "seed", "0");
    expect_default("pread", "file_size", "1g");
    const char *full = "disk/pread/block_size=4096,file_size=1073741824,ios_per_iter=0,mode=direct,pattern=random,"
                       "seed=0";
    /* a parameter missing on one side holds the default, sizes by value ("1g") */
    assert_true(mb_case_ids_same(full, "disk/pread/block_size=4096,ios_per_iter=0,mode=direct,pattern=random"));
    assert_false(mb_case_ids_same("disk/pread/block_size=4096,file_size=536870912,ios_per_iter=0,mode=direct,"
                                  "pattern=random,seed=0",
                                  "disk/pread/block_size=4096,ios_per_iter=0,mode=direct,pattern=random,seed=0"));
    /* a parameter this build's table lacks, on one side only: no default to hold it to */
    assert_false(mb_case_ids_same(full, "disk/pread/block_size=4096,file_size=1073741824,ios_per_iter=0,"
                                        "mode=direct,pattern=random,seed=0,gone=1"));
    /* another backend or component with the same parameters: never the same */
    assert_false(mb_case_ids_same(full, "disk/mmap/block_size=4096,file_size=1073741824,ios_per_iter=0,"
                                        "mode=direct,pattern=random,seed=0"));
    /* the parameters' order in the id does not matter */
    assert_true(mb_case_ids_same(full, "disk/pread/seed=0,pattern=random,mode=direct,ios_per_iter=0,"
                                       "file_size=1073741824,block_size=4096"));
}

/* A GPU module's backend: its table once the module loads (skipped where it does
 * not load: then the backend is unknown here and pairs by exact id only). */
static void test_rule_on_module_backend(void **state)
{
    (void)state;
    const mb_component_ops *ops = mb_registry_find("copy", "cuda");
    if (ops == NULL || ops->params_unknown)
        skip();
    const mb_param_spec *numa = mb_param_spec_find(ops->params, "numa");
    const mb_param_spec *size = mb_param_spec_find(ops->params, "size");
    assert_non_null(numa);
    assert_non_null(size);
    assert_string_equal(numa->def, "true");
    assert_string_equal(size->def, "64m");
    const char *old = "copy/cuda/copies=0,direction=h2d,memory=pinned,size=1048576";
    assert_true(mb_case_ids_same(old, "copy/cuda/copies=0,direction=h2d,memory=pinned,numa=true,size=1048576"));
    assert_false(mb_case_ids_same(old, "copy/cuda/copies=0,direction=h2d,memory=pinned,numa=false,size=1048576"));
    /* size at its default, written "64m" in the table and in bytes in the id */
    assert_true(mb_case_ids_same("copy/cuda/copies=0,direction=h2d,memory=pinned",
                                 "copy/cuda/copies=0,direction=h2d,memory=pinned,size=67108864"));
}

static void test_unknown_backend_exact_id(void **state)
{
    (void)state;
    assert_true(mb_case_ids_same("disk/nosuch/a=1", "disk/nosuch/a=1"));
    assert_false(mb_case_ids_same("disk/nosuch/a=1", "disk/nosuch/a=1,b=0"));
    assert_false(mb_case_ids_same("nosuch/pread/a=1", "nosuch/pread/a=1,b=0"));
    /* not an id of the form component/backend/k=v: itself only */
    assert_true(mb_case_ids_same("disk/pread/odd", "disk/pread/odd"));
    assert_false(mb_case_ids_same("disk/pread/odd", "disk/pread/odd,seed=0"));
    assert_false(mb_case_ids_same("disk", "disk/pread/seed=0"));
    assert_false(mb_case_ids_same(NULL, "disk/pread/seed=0"));
}

static cJSON *case_obj(const char *id, const char *comp, const char *backend, const char *params_json)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "id", id);
    cJSON_AddStringToObject(c, "component", comp);
    cJSON_AddStringToObject(c, "backend", backend);
    cJSON_AddItemToObject(c, "params", cJSON_Parse(params_json));
    return c;
}

static void test_find_same_prefers_exact_id(void **state)
{
    (void)state;
    cJSON *cases = cJSON_CreateArray();
    const char *shortid = "disk/pread/block_size=4096,ios_per_iter=0,mode=direct,pattern=random";
    const char *full = "disk/pread/block_size=4096,ios_per_iter=0,mode=direct,pattern=random,seed=0";
    cJSON_AddItemToArray(cases, case_obj(shortid, "disk", "pread", "{}"));
    cJSON_AddItemToArray(cases, case_obj(full, "disk", "pread", "{}"));
    cJSON *probe = case_obj(full, "disk", "pread", "{}");
    assert_ptr_equal(mb_case_find_same(cases, probe), cJSON_GetArrayItem(cases, 1));
    cJSON_ReplaceItemInObject(probe, "id",
                              cJSON_CreateString("disk/pread/block_size=4096,file_size=1073741824,ios_per_iter=0,"
                                                 "mode=direct,pattern=random"));
    assert_ptr_equal(mb_case_find_same(cases, probe), cJSON_GetArrayItem(cases, 0));
    cJSON_ReplaceItemInObject(probe, "id", cJSON_CreateString("disk/pread/block_size=8192"));
    assert_null(mb_case_find_same(cases, probe));
    cJSON_Delete(probe);
    cJSON_Delete(cases);
}

/* ---- the first H100 run against its copy with today's io_uring ids ----------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds the parameters io_uring gained (`extra`, "name=value" each) to every
 * io_uring case of doc and rebuilds its id as the harness writes it (all
 * parameters, in name order). Returns how many cases it changed. */
static int add_uring_params(cJSON *doc, const char *const *extra, int n_extra)
{
    int changed = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
    {
        if (strcmp(cJSON_GetObjectItem(c, "backend")->valuestring, "io_uring") != 0)
            continue;
        cJSON *params = cJSON_GetObjectItem(c, "params");
        for (int i = 0; i < n_extra; i++) {
            char name[64];
            const char *eq = strchr(extra[i], '=');
            snprintf(name, sizeof name, "%.*s", (int)(eq - extra[i]), extra[i]);
            cJSON_DeleteItemFromObject(params, name);
            cJSON_AddStringToObject(params, name, eq + 1);
        }
        char *pairs[64], id[2048];
        int n = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, params)
        {
            pairs[n] = malloc(strlen(p->string) + strlen(p->valuestring) + 2);
            sprintf(pairs[n++], "%s=%s", p->string, p->valuestring);
        }
        qsort(pairs, (size_t)n, sizeof *pairs, cmp_str);
        size_t at = (size_t)snprintf(id, sizeof id, "disk/io_uring/");
        for (int i = 0; i < n; i++) {
            at += (size_t)snprintf(id + at, sizeof id - at, "%s%s", i ? "," : "", pairs[i]);
            free(pairs[i]);
        }
        assert_string_not_equal(id, cJSON_GetObjectItem(c, "id")->valuestring);
        cJSON_ReplaceItemInObject(c, "id", cJSON_CreateString(id));
        changed++;
    }
    return changed;
}

static cJSON *load_h100(void)
{
    cJSON *doc = NULL;
    mb_err err = { 0 };
    if (mb_results_load(H100_FILE, &doc, &err))
        fail_msg("%s", err.msg);
    return doc;
}

/* compare's rows of the file against its copy: every case of the file pairs
 * with its copy (rows == cases) when `pairs`, and each disk row has both. */
static int compare_rows(cJSON *orig, cJSON *copy, int *disk_rows_paired)
{
    mb_ceilings m[2];
    mb_ini keys;
    mb_compare c;
    mb_err err = { 0 };
    if (mb_ini_load_gap("compare.ini", &keys, &err) || mb_ceilings_from_json(orig, "orig.json", &m[0], &err) ||
        mb_ceilings_from_json(copy, "copy.json", &m[1], &err) ||
        mb_compare_build(m, 2, NULL, 0, NULL, 0, &keys, &c, &err))
        fail_msg("%s", err.msg);
    int rows = c.n_rows;
    *disk_rows_paired = 0;
    for (int r = 0; r < c.n_rows; r++) {
        const mb_compare_row *row = &c.rows[r];
        if (strcmp(row->component, "disk") != 0 || row->idx[0] < 0 || row->idx[1] < 0)
            continue;
        /* the copy's case is the one measurement: its rate is the original's */
        assert_true(m[0].cases[row->idx[0]].rate == m[1].cases[row->idx[1]].rate);
        assert_string_equal(m[0].cases[row->idx[0]].backend, m[1].cases[row->idx[1]].backend);
        (*disk_rows_paired)++;
    }
    mb_compare_free(&c);
    mb_ceilings_free(&m[0]);
    mb_ceilings_free(&m[1]);
    mb_ini_free(&keys);
    return rows;
}

static int count_component(const cJSON *doc, const char *component, const char *backend)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
        n += strcmp(cJSON_GetObjectItem(c, "component")->valuestring, component) == 0 &&
             (backend == NULL || strcmp(cJSON_GetObjectItem(c, "backend")->valuestring, backend) == 0);
    return n;
}

static void test_h100_compare_pairs_every_disk_case(void **state)
{
    (void)state;
    if (!uring_built_in())
        skip();
    static const char *const defaults[] = { "registered=auto", "sqpoll=off", "iopoll=off" };
    cJSON *orig = load_h100();
    int n_cases = cJSON_GetArraySize(cJSON_GetObjectItem(orig, "cases"));
    int n_disk = count_component(orig, "disk", NULL), n_uring = count_component(orig, "disk", "io_uring");
    assert_true(n_uring > 0);
    cJSON *copy = cJSON_Duplicate(orig, true);
    assert_int_equal(add_uring_params(copy, defaults, 3), n_uring);
    int paired = 0;
    assert_int_equal(compare_rows(orig, copy, &paired), n_cases); /* takes both documents */
    assert_int_equal(paired, n_disk);

    /* a new parameter at a non-default value is another measurement: the io_uring cases pair no more */
    static const char *const sqpoll_on[] = { "registered=auto", "sqpoll=on", "iopoll=off" };
    orig = load_h100();
    copy = cJSON_Duplicate(orig, true);
    add_uring_params(copy, sqpoll_on, 3);
    assert_int_equal(compare_rows(orig, copy, &paired), n_cases + n_uring);
    assert_int_equal(paired, n_disk - n_uring);
}

static int array_size(const cJSON *o, const char *name)
{
    return cJSON_GetArraySize(cJSON_GetObjectItem(o, name));
}

static int num(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItem(o, name)->valueint;
}

static void test_h100_baseline_pairs_every_disk_case(void **state)
{
    (void)state;
    if (!uring_built_in())
        skip();
    static const char *const defaults[] = { "registered=auto", "sqpoll=off", "iopoll=off" };
    cJSON *orig = load_h100();
    cJSON *copy = cJSON_Duplicate(orig, true);
    add_uring_params(copy, defaults, 3);
    mb_err err = { 0 };
    cJSON *self = NULL, *old_base = NULL, *new_base = NULL;
    /* the file against itself: what a like-for-like baseline compares */
    if (mb_baseline_check(orig, orig, 0.1, &self, &err) != MB_OK)
        fail_msg("%s", err.msg);
    assert_true(num(self, "compared") > count_component(orig, "disk", NULL) / 2);
    /* this run's ids are today's, the baseline's from last month */
    if (mb_baseline_check(copy, orig, 0.1, &old_base, &err) != MB_OK)
        fail_msg("%s", err.msg);
    if (mb_baseline_check(orig, copy, 0.1, &new_base, &err) != MB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(num(old_base, "compared"), num(self, "compared"));
    assert_int_equal(num(new_base, "compared"), num(self, "compared"));
    assert_int_equal(array_size(old_base, "not_compared"), array_size(self, "not_compared"));
    assert_int_equal(array_size(new_base, "not_compared"), array_size(self, "not_compared"));
    assert_int_equal(array_size(old_base, "failed"), 0);
    cJSON_Delete(self);
    cJSON_Delete(old_base);
    cJSON_Delete(new_base);

    /* sqpoll=on in this run: its io_uring cases are not in the baseline */
    static const char *const sqpoll_on[] = { "registered=auto", "sqpoll=on", "iopoll=off" };
    cJSON *on = cJSON_Duplicate(orig, true);
    add_uring_params(on, sqpoll_on, 3);
    cJSON *res = NULL;
    if (mb_baseline_check(on, orig, 0.1, &res, &err) != MB_OK)
        fail_msg("%s", err.msg);
    int missing = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(res, "not_compared"))
        missing += strcmp(cJSON_GetObjectItem(e, "reason")->valuestring, "not in the baseline") == 0;
    assert_int_equal(missing, count_component(orig, "disk", "io_uring"));
    cJSON_Delete(res);
    cJSON_Delete(on);
    cJSON_Delete(orig);
    cJSON_Delete(copy);
}

static void write_file(const char *dir, const char *name, const cJSON *doc)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = cJSON_PrintUnformatted(doc);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
}

/* A reference joining a newer file (today's io_uring ids) and the older one
 * it was run after: the older file's io_uring cases are the newer file's
 * measurements, not cases of their own. */
static void test_reference_join_pairs_old_ids(void **state)
{
    (void)state;
    if (!uring_built_in())
        skip();
    static const char *const defaults[] = { "registered=auto", "sqpoll=off", "iopoll=off" };
    char refs[512], dir[600];
    snprintf(refs, sizeof refs, "%s/refs", scratch_dir());
    snprintf(dir, sizeof dir, "%s/joined", refs);
    assert_int_equal(mkdir(refs, 0755) == 0 || errno == EEXIST, 1);
    assert_int_equal(mkdir(dir, 0755) == 0 || errno == EEXIST, 1);
    char ini[700];
    snprintf(ini, sizeof ini, "%s/reference.ini", dir);
    FILE *f = fopen(ini, "w");
    assert_non_null(f);
    fputs("[reference]\nlabel = Joined\nfiles = new.json, old.json\n[provenance]\nsource = test\n", f);
    fclose(f);
    cJSON *old = load_h100();
    cJSON *copy = cJSON_Duplicate(old, true);
    add_uring_params(copy, defaults, 3);
    write_file(dir, "new.json", copy);
    write_file(dir, "old.json", old);
    int n_cases = cJSON_GetArraySize(cJSON_GetObjectItem(old, "cases"));
    cJSON_Delete(old);
    cJSON_Delete(copy);

    setenv("MLBENCH_REFERENCE_DIR", refs, 1);
    mb_reference r;
    mb_err err = { 0 };
    if (mb_reference_load("joined", &r, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(r.measured.n_cases, n_cases);
    for (int i = 0; i < r.measured.n_cases; i++)
        assert_string_equal(cJSON_GetObjectItem(r.measured.cases[i].json, "reference_file")->valuestring, "new.json");
    mb_reference_free(&r);
    unsetenv("MLBENCH_REFERENCE_DIR");
}

static int remove_scratch(void **state)
{
    (void)state;
    rm_scratch();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_equal),
        cmocka_unit_test(test_uring_old_and_new_ids),
        cmocka_unit_test(test_membw_waves_ids),
        cmocka_unit_test(test_rule_on_pread),
        cmocka_unit_test(test_rule_on_module_backend),
        cmocka_unit_test(test_unknown_backend_exact_id),
        cmocka_unit_test(test_find_same_prefers_exact_id),
        cmocka_unit_test(test_h100_compare_pairs_every_disk_case),
        cmocka_unit_test(test_h100_baseline_pairs_every_disk_case),
        cmocka_unit_test(test_reference_join_pairs_old_ids),
    };
    return cmocka_run_group_tests(tests, NULL, remove_scratch);
}
